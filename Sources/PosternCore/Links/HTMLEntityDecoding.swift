/// Decoding the HTML character references that appear in pasted mail source: `&amp;` between query
/// parameters above all, and the quotes and angle brackets that delimit links.
package enum HTMLEntityDecoding {
    /// Whether `bytes` hold a reference this decoder would change, so callers can skip a copy.
    static func isPresent(in bytes: [UInt8]) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            index = bytes.withUnsafeBufferPointer { buffer in
                var next = index
                while next < buffer.count, buffer[next] != UInt8(ascii: "&") {
                    next += 1
                }
                return next
            }
            if index < count, reference(bytes, at: index) != nil {
                return true
            }
            index += 1
        }
        return false
    }

    /// `bytes` with `&amp; &lt; &gt; &quot; &apos; &nbsp;` and numeric references (`&#38;`, `&#x26;`)
    /// decoded; anything else is left as it is.
    package static func decode(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "&"), let (scalar, length) = reference(bytes, at: index) {
                appendUTF8(scalar, to: &output)
                index += length
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// The scalar a reference at `index` (which holds `&`) stands for, and the reference's length.
    private static func reference(_ bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
        // Most `&` in pasted text separate query parameters (`&data=`): reject them on one byte.
        guard index + 1 < bytes.count else { return nil }
        switch bytes[index + 1] | 0x20 {
        case UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "g"), UInt8(ascii: "q"), UInt8(ascii: "n"), UInt8(ascii: "#") | 0x20:
            break
        default:
            return nil
        }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&amp;") { return (0x26, 5) }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&lt;") { return (0x3C, 4) }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&gt;") { return (0x3E, 4) }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&quot;") { return (0x22, 6) }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&apos;") { return (0x27, 6) }
        if LinkBytes.hasPrefixIgnoringCase(bytes, at: index, "&nbsp;") { return (0x20, 6) }
        guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "#") else { return nil }
        var next = index + 2
        var hex = false
        if next < bytes.count, bytes[next] == UInt8(ascii: "x") || bytes[next] == UInt8(ascii: "X") {
            hex = true
            next += 1
        }
        var value: UInt32 = 0
        var digits = 0
        // At most 7 digits: enough for U+10FFFF, and no overflow.
        while next < bytes.count, digits < 8 {
            let byte = bytes[next]
            if hex, let digit = LinkBytes.hexValue(byte) {
                value = value * 16 + UInt32(digit)
            } else if !hex, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
            } else {
                break
            }
            digits += 1
            next += 1
        }
        guard digits > 0, digits <= 7, next < bytes.count, bytes[next] == UInt8(ascii: ";"),
              value > 0, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return nil }
        return (value, next + 1 - index)
    }

    private static func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | (scalar >> 6)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | (scalar >> 12)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            output.append(UInt8(0xF0 | (scalar >> 18)))
            output.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }
}
