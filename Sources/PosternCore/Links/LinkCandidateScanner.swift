/// Finds the URLs in a pasted text: bare, in HTML attributes, in markdown, and inside `<…>` where
/// mail clients may have folded them across lines (RFC 3986 appendix C).
///
/// One left-to-right pass: every byte is looked at a bounded number of times, so the scan is
/// linear in the text's length whatever it holds.
enum LinkCandidateScanner {
    /// One URL-looking run of the text.
    struct Candidate {
        /// The URL's bytes: trailing punctuation trimmed, folding whitespace inside `<…>` removed.
        var bytes: [UInt8]
    }

    /// The candidates in `text`, in order. Recognised starts are `http://`, `https://` (any case)
    /// and `javascript:` at a word start.
    static func candidates(in text: [UInt8]) -> [Candidate] {
        var found = [Candidate]()
        var index = 0
        let count = text.count
        while index < count {
            let byte = text[index] | 0x20
            guard byte == UInt8(ascii: "h") || byte == UInt8(ascii: "j"), let schemeLength = schemeLength(text, at: index) else {
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
        var index = start
        let quote = opener == UInt8(ascii: "'")
        while index < text.count {
            let byte = text[index]
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "<")
                || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "`") || (quote && byte == UInt8(ascii: "'")) {
                break
            }
            index += 1
        }
        return index
    }

    /// The end of `bytes[range]` once sentence punctuation and unbalanced closing brackets (the
    /// `)` of a markdown link) are cut off.
    static func trimTrailingPunctuation(_ bytes: [UInt8], _ range: Range<Int>) -> Int {
        var open = 0
        var close = 0
        var openSquare = 0
        var closeSquare = 0
        for index in range {
            switch bytes[index] {
            case UInt8(ascii: "("): open += 1
            case UInt8(ascii: ")"): close += 1
            case UInt8(ascii: "["): openSquare += 1
            case UInt8(ascii: "]"): closeSquare += 1
            default: break
            }
        }
        var end = range.upperBound
        while end > range.lowerBound {
            let byte = bytes[end - 1]
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "!"),
                 UInt8(ascii: "?"), UInt8(ascii: "'"), UInt8(ascii: "\""):
                end -= 1
            case UInt8(ascii: ")") where close > open:
                close -= 1
                end -= 1
            case UInt8(ascii: "]") where closeSquare > openSquare:
                closeSquare -= 1
                end -= 1
            default:
                return end
            }
        }
        return end
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
