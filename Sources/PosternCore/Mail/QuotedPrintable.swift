/// Quoted-printable body encoding (RFC 2045 §6.7) with CRLF line ends.
enum QuotedPrintable {
    /// The longest encoded line, soft-break `=` included.
    static let lineLimit = 76

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends `text` quoted-printable encoded to `out`. Line ends (`\n`, `\r\n` or a lone `\r`)
    /// become CRLF; lines longer than ``lineLimit`` get soft breaks; trailing spaces and tabs,
    /// `=`, non-ASCII and control bytes are escaped, and so are a `.` or the `F` of `From ` at the
    /// start of a line, so relays that dot-stuff or mangle mbox lines cannot change the text.
    static func encode(_ text: String, into out: inout [UInt8]) {
        let bytes = Array(text.utf8)
        out.reserveCapacity(out.count + bytes.count + bytes.count / 8 + 8)
        var lineLength = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                if byte == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                out.append(UInt8(ascii: "\r"))
                out.append(UInt8(ascii: "\n"))
                lineLength = 0
                index += 1
                continue
            }
            let endsLine =
                index + 1 == bytes.count || bytes[index + 1] == UInt8(ascii: "\r") || bytes[index + 1] == UInt8(ascii: "\n")
            let literal: Bool
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                literal = !endsLine
            case UInt8(ascii: "="):
                literal = false
            case UInt8(ascii: "."):
                literal = lineLength != 0
            case UInt8(ascii: "F"):
                literal = lineLength != 0 || !startsFromLine(bytes, at: index)
            case 0x21...0x7E:
                literal = true
            default:
                literal = false
            }
            let width = literal ? 1 : 3
            // Keep room for the soft-break "=" unless this is the last byte of the line.
            let room = endsLine ? lineLimit : lineLimit - 1
            if lineLength + width > room {
                out.append(UInt8(ascii: "="))
                out.append(UInt8(ascii: "\r"))
                out.append(UInt8(ascii: "\n"))
                lineLength = 0
                if (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "F")) && literal {
                    // The character now starts a line: decide again.
                    continue
                }
            }
            if literal {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "="))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
            lineLength += width
            index += 1
        }
    }

    private static func startsFromLine(_ bytes: [UInt8], at index: Int) -> Bool {
        let from: [UInt8] = Array("From ".utf8)
        guard index + from.count <= bytes.count else { return false }
        return Array(bytes[index..<(index + from.count)]) == from
    }
}
