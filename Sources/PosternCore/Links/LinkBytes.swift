/// Small byte-level helpers shared by the link parser; the hot path stays on UTF-8 bytes.
enum LinkBytes {
    /// ASCII lower-casing of one byte; other bytes are returned unchanged.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `byte` is a hexadecimal digit (either case).
    @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        hexValue(byte) != nil
    }

    /// Whether `byte` is a space, tab, CR or LF.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x0B
    }

    /// Whether `bytes[range]` equals the ASCII literal `literal` exactly.
    static func equals(_ bytes: [UInt8], _ range: Range<Int>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard range.count == length, range.lowerBound >= 0, range.upperBound <= bytes.count else { return false }
        return literal.withUTF8Buffer { expected in
            for offset in 0..<length where bytes[range.lowerBound + offset] != expected[offset] {
                return false
            }
            return true
        }
    }

    /// Whether `bytes[range]` equals the lower-case ASCII literal `literal`, ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: [UInt8], _ range: Range<Int>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard range.count == length, range.lowerBound >= 0, range.upperBound <= bytes.count else { return false }
        return literal.withUTF8Buffer { expected in
            for offset in 0..<length where lowercased(bytes[range.lowerBound + offset]) != expected[offset] {
                return false
            }
            return true
        }
    }

    /// Whether `bytes` holds the lower-case ASCII literal `literal` at `index`, ignoring ASCII case.
    static func hasPrefixIgnoringCase(_ bytes: [UInt8], at index: Int, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard index >= 0, index + length <= bytes.count else { return false }
        return equalsIgnoringCase(bytes, index..<(index + length), literal)
    }

    /// Whether `bytes` holds the ASCII literal `literal` at `index`, case-sensitively.
    static func hasPrefix(_ bytes: [UInt8], at index: Int, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard index >= 0, index + length <= bytes.count else { return false }
        return equals(bytes, index..<(index + length), literal)
    }

    /// The first index at or after `start` and before `end` where `literal` begins, or nil.
    ///
    /// Linear in `end - start` for the short literals used here (the literal length is a constant).
    static func firstIndex(of literal: StaticString, in bytes: [UInt8], from start: Int, to end: Int) -> Int? {
        let length = literal.utf8CodeUnitCount
        guard length > 0, start >= 0, end <= bytes.count, end - start >= length else { return nil }
        let first = literal.withUTF8Buffer { $0[0] }
        var index = start
        while index + length <= end {
            if bytes[index] == first, equals(bytes, index..<(index + length), literal) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// `bytes` without leading and trailing ASCII whitespace.
    static func trimmingWhitespace(_ bytes: [UInt8]) -> [UInt8] {
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) {
            start += 1
        }
        while end > start, isWhitespace(bytes[end - 1]) {
            end -= 1
        }
        return start == 0 && end == bytes.count ? bytes : Array(bytes[start..<end])
    }
}
