/// Finds the URLs in a pasted text: bare, in HTML attributes, in markdown, and inside `<…>` where
/// mail clients may have folded them across lines (RFC 3986 appendix C).
///
/// One left-to-right pass: every byte is looked at a bounded number of times, so the scan is
/// linear in the text's length whatever it holds.
package enum LinkCandidateScanner {
    /// One URL-looking run of the text.
    package struct Candidate {
        /// The URL's bytes: trailing punctuation trimmed, folding whitespace inside `<…>` removed.
        var bytes: [UInt8]
    }

    /// The candidates in `text`, in order. Recognised starts are `http://`, `https://` (any case)
    /// and `javascript:` at a word start.
    package static func candidates(in text: [UInt8]) -> [Candidate] {
        var found = [Candidate]()
        var index = 0
        let count = text.count
        while index < count {
            index = nextPossibleSchemeStart(text, from: index)
            guard index < count else { break }
            guard let schemeLength = schemeLength(text, at: index) else {
                index += 1
                continue
            }
            let opener: UInt8 = index > 0 ? text[index - 1] : 0
            if opener == UInt8(ascii: "<") || isAfterURLLabel(text, at: index),
               let (bytes, next) = angleBracketed(text, from: index) {
                if bytes.count > schemeLength {
                    found.append(Candidate(bytes: bytes))
                }
                index = next
                continue
            }
            let end = plainEnd(text, from: index, opener: opener)
            let trimmedEnd = trimTrailingPunctuation(text, index..<end)
            if trimmedEnd - index > schemeLength {
                found.append(Candidate(bytes: Array(text[index..<trimmedEnd])))
            }
            index = max(end, index + 1)
        }
        return found
    }

    /// The first index at or after `start` holding `h` or `j` (any case), or `text.count`.
    private static func nextPossibleSchemeStart(_ text: [UInt8], from start: Int) -> Int {
        text.withUnsafeBufferPointer { buffer in
            var index = start
            while index < buffer.count {
                let byte = buffer[index] | 0x20
                if byte == UInt8(ascii: "h") || byte == UInt8(ascii: "j") {
                    return index
                }
                index += 1
            }
            return buffer.count
        }
    }

    /// The length of the recognised scheme prefix at `index`, or nil.
    private static func schemeLength(_ text: [UInt8], at index: Int) -> Int? {
        if LinkBytes.hasPrefixIgnoringCase(text, at: index, "https://") { return 8 }
        if LinkBytes.hasPrefixIgnoringCase(text, at: index, "http://") { return 7 }
        if LinkBytes.hasPrefixIgnoringCase(text, at: index, "javascript:") {
            let atWordStart = index == 0 || !isWordByte(text[index - 1])
            return atWordStart ? 11 : nil
        }
        return nil
    }

    /// `<URL:http://…>`, the form RFC 3986 appendix C suggests.
    private static func isAfterURLLabel(_ text: [UInt8], at index: Int) -> Bool {
        index >= 5 && LinkBytes.hasPrefixIgnoringCase(text, at: index - 5, "<url:")
    }

    /// The URL inside `<…>` starting at `start`, without whitespace, and the index after `>`;
    /// nil when no `>` comes before the next `<`, so a stray `<` costs one scan of its own stretch.
    private static func angleBracketed(_ text: [UInt8], from start: Int) -> ([UInt8], Int)? {
        var index = start
        var bytes = [UInt8]()
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ">") {
                let trimmed = trimTrailingPunctuation(bytes, 0..<bytes.count)
                return (Array(bytes[0..<trimmed]), index + 1)
            }
            if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "\"") {
                return nil
            }
            if !LinkBytes.isWhitespace(byte) {
                bytes.append(byte)
            }
            index += 1
        }
        return nil
    }

    /// Where a URL that is not in angle brackets ends: at whitespace, a control or non-ASCII byte,
    /// `"`, `<`, `>` or a backtick; at `'` too when the URL was opened by one.
    private static func plainEnd(_ text: [UInt8], from start: Int, opener: UInt8) -> Int {
        // One table load per byte: bit 0 ends every URL, bit 1 ends one opened by `'`.
        let mask: UInt8 = opener == UInt8(ascii: "'") ? 0b11 : 0b01
        return plainURLEnders.withUnsafeBufferPointer { enders in
            text.withUnsafeBufferPointer { buffer in
                var index = start
                while index < buffer.count, enders[Int(buffer[index])] & mask == 0 {
                    index += 1
                }
                return index
            }
        }
    }

    /// Per byte value: bit 0 when the byte ends a plain URL (whitespace, controls, non-ASCII,
    /// `"`, `<`, `>`, backtick), bit 1 for `'`.
    private static let plainURLEnders: [UInt8] = (0..<256).map { value in
        let byte = UInt8(value)
        if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "<")
            || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "`") {
            return 0b01
        }
        return byte == UInt8(ascii: "'") ? 0b10 : 0
    }

    /// The end of `bytes[range]` once sentence punctuation and unbalanced closing brackets (the
    /// `)` of a markdown link) are cut off.
    static func trimTrailingPunctuation(_ bytes: [UInt8], _ range: Range<Int>) -> Int {
        // Brackets are only counted when one ends the URL, so the common case is one short loop.
        var balance: (round: Int, square: Int)?
        var end = range.upperBound
        while end > range.lowerBound {
            let byte = bytes[end - 1]
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "!"),
                 UInt8(ascii: "?"), UInt8(ascii: "'"), UInt8(ascii: "\""):
                end -= 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"):
                var counts = balance ?? bracketBalance(bytes, range.lowerBound..<end)
                if byte == UInt8(ascii: ")"), counts.round < 0 {
                    counts.round += 1
                } else if byte == UInt8(ascii: "]"), counts.square < 0 {
                    counts.square += 1
                } else {
                    return end
                }
                balance = counts
                end -= 1
            default:
                return end
            }
        }
        return end
    }

    /// Opening minus closing round and square brackets in `bytes[range]`.
    private static func bracketBalance(_ bytes: [UInt8], _ range: Range<Int>) -> (round: Int, square: Int) {
        var round = 0
        var square = 0
        for index in range {
            switch bytes[index] {
            case UInt8(ascii: "("): round += 1
            case UInt8(ascii: ")"): round -= 1
            case UInt8(ascii: "["): square += 1
            case UInt8(ascii: "]"): square -= 1
            default: break
            }
        }
        return (round, square)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }
}
