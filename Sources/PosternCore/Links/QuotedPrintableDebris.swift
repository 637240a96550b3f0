/// Undoing quoted-printable (RFC 2045 section 6.7) left in pasted mail: `=` soft line breaks and
/// `=3D`-style escapes.
///
/// A pasted text is only treated as quoted-printable when it shows the encoding for certain: a soft
/// line break (`=` at the end of a line), or every `=` in it being a `=XX` escape with at least one
/// `=3D`. Otherwise a link whose code happens to start with `3D` would lose two characters.
enum QuotedPrintableDebris {
    /// Whether `bytes` look quoted-printable by the rule above.
    static func isPresent(in bytes: [UInt8]) -> Bool {
        var sawSoftBreak = false
        var sawEscapedEquals = false
        var sawBareEquals = false
        var index = 0
        let count = bytes.count
        while index < count {
            guard bytes[index] == UInt8(ascii: "=") else {
                index += 1
                continue
            }
            if softBreakEnd(bytes, at: index) != nil {
                sawSoftBreak = true
                break
            }
            if index + 2 < count, isUpperHex(bytes[index + 1]), isUpperHex(bytes[index + 2]) {
                if bytes[index + 1] == UInt8(ascii: "3"), bytes[index + 2] == UInt8(ascii: "D") {
                    sawEscapedEquals = true
                }
            } else {
                sawBareEquals = true
            }
            index += 1
        }
        return sawSoftBreak || (sawEscapedEquals && !sawBareEquals)
    }

    /// `bytes` with soft line breaks removed and `=XX` escapes decoded; a lone `=` stays.
    static func decode(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "=") else {
                output.append(byte)
                index += 1
                continue
            }
            if let next = softBreakEnd(bytes, at: index) {
                index = next
            } else if index + 2 < count, let high = LinkBytes.hexValue(bytes[index + 1]),
                      let low = LinkBytes.hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// When `bytes[index]` is `=` ending a line (trailing spaces or tabs allowed, then LF or CRLF),
    /// the index after the line break.
    private static func softBreakEnd(_ bytes: [UInt8], at index: Int) -> Int? {
        var next = index + 1
        // Trailing blanks added in transport are part of the soft break; bounded so that a run of
        // blanks is not rescanned for every `=` before it.
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
