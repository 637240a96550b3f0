/// Lenient base64 decoding for gateway rewrites: both the URL-safe (`-_`) and the standard (`+/`)
/// alphabet, padding optional.
package enum Base64Decoding {
    /// The bytes `text[range]` encode, or nil when a character is outside both alphabets or the
    /// length leaves a lone 6-bit group (which no encoder produces).
    package static func decode(_ text: [UInt8], _ range: Range<Int>) -> [UInt8]? {
        var output = [UInt8]()
        output.reserveCapacity(range.count * 3 / 4 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        var sextets = 0
        for index in range {
            let byte = text[index]
            if byte == UInt8(ascii: "=") {
                break
            }
            guard let value = sextet(byte) else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            sextets += 1
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard sextets % 4 != 1 else { return nil }
        return output
    }

    @inline(__always)
    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"), UInt8(ascii: "+"): 62
        case UInt8(ascii: "_"), UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
