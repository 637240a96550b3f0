/// Percent-decoding (RFC 3986 section 2.1) of byte ranges.
enum PercentDecoding {
    /// `bytes[range]` with every `%XX` replaced by its byte.
    ///
    /// A `%` that is not followed by two hex digits is kept as it is (browsers do the same), and
    /// `+` stays `+`: the links this service writes encode a space as `%20`, and gateways
    /// percent-encode the whole wrapped URL, so reading `+` as a space could only corrupt a code.
    static func decode(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < end,
               let high = LinkBytes.hexValue(bytes[index + 1]), let low = LinkBytes.hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// Whether `bytes[range]` holds a `%` at all, so callers can skip a copy.
    static func needsDecoding(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        for index in range where bytes[index] == UInt8(ascii: "%") {
            return true
        }
        return false
    }
}
