/// Undoing quoted-printable (RFC 2045 section 6.7) left in pasted mail: `=` soft line breaks and
/// `=3D`-style escapes.
///
/// Pasted text is full of `=` that are not quoted-printable (every query string has them, and a
/// Proofpoint v2 link ends in `&e=`), so a line break after `=` only counts as a soft break on a
/// line that could be quoted-printable: at most 76 characters with every other `=` on it an `=XX`
/// escape. The text is treated as quoted-printable when it has such a soft break, or when every
/// `=` in it is an escape and one is `=3D`; otherwise a link whose code happens to start with
/// `3D` would lose two characters.
package enum QuotedPrintableDebris {
    /// The longest encoded line RFC 2045 allows, soft-break `=` included.
    static let maximumLineLength = 76

    /// Whether `bytes` look quoted-printable by the rule above.
    static func isPresent(in bytes: [UInt8]) -> Bool {
        var sawEscapedEquals = false
        var sawBareEquals = false
        var line = LineState()
        var index = 0
        let count = bytes.count
        while index < count {
            index = bytes.withUnsafeBufferPointer { buffer in
                var next = index
                while next < buffer.count, buffer[next] != UInt8(ascii: "="), buffer[next] != 0x0A {
                    next += 1
                }
                return next
            }
            guard index < count else { break }
            if bytes[index] == 0x0A {
                line.start(at: index + 1)
                index += 1
                continue
            }
            if softBreakEnd(bytes, at: index, line: line) != nil {
                return true
            }
            if index + 2 < count, LinkBytes.isHexDigit(bytes[index + 1]), LinkBytes.isHexDigit(bytes[index + 2]) {
                // An escape for the line's sake (as `decode` sees it); only upper case counts as
                // evidence of the encoding for the whole text.
                if !isUpperHex(bytes[index + 1]) || !isUpperHex(bytes[index + 2]) {
                    sawBareEquals = true
                } else if bytes[index + 1] == UInt8(ascii: "3"), bytes[index + 2] == UInt8(ascii: "D") {
                    sawEscapedEquals = true
                }
            } else {
                sawBareEquals = true
                line.hasBareEquals = true
            }
            index += 1
        }
        return sawEscapedEquals && !sawBareEquals
    }

    /// `bytes` with soft line breaks removed and `=XX` escapes decoded; any other `=` stays.
    package static func decode(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var line = LineState()
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == 0x0A {
                line.start(at: index + 1)
            }
            guard byte == UInt8(ascii: "=") else {
                output.append(byte)
                index += 1
                continue
            }
            if let next = softBreakEnd(bytes, at: index, line: line) {
                // The next line starts after the break; it is a new encoded line.
                line.start(at: next)
                index = next
            } else if index + 2 < count, let high = LinkBytes.hexValue(bytes[index + 1]),
                      let low = LinkBytes.hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                line.hasBareEquals = true
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// Where the current line starts and whether it holds an `=` that is not an escape.
    private struct LineState {
        var startIndex = 0
        var hasBareEquals = false

        mutating func start(at index: Int) {
            startIndex = index
            hasBareEquals = false
        }
    }

    /// When `bytes[index]` is `=` ending a line that could be quoted-printable (trailing spaces or
    /// tabs allowed, then LF or CRLF), the index after the line break.
    private static func softBreakEnd(_ bytes: [UInt8], at index: Int, line: LineState) -> Int? {
        guard !line.hasBareEquals, index + 1 - line.startIndex <= maximumLineLength else { return nil }
        var next = index + 1
        // Blanks added in transport belong to the soft break; bounded so a run of blanks is not
        // rescanned for every `=` before it.
        var blanks = 0
        while next < bytes.count, bytes[next] == 0x20 || bytes[next] == 0x09, blanks < 16 {
            next += 1
            blanks += 1
        }
        if next < bytes.count, bytes[next] == 0x0A {
            return next + 1
        }
        if next + 1 < bytes.count, bytes[next] == 0x0D, bytes[next + 1] == 0x0A {
            return next + 2
        }
        return nil
    }

    @inline(__always)
    private static func isUpperHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
}
