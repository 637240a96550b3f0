/// Percent-decoding (RFC 3986 section 2.1) of byte ranges: the one decoder of the project (links,
/// SMTP URLs, the hosted page's form, path parameters).
public enum PercentDecoding {
    /// `text` percent-decoded, or nil when the result is not UTF-8. `plusIsSpace` for
    /// `application/x-www-form-urlencoded` (a form's fields), where `+` is a space.
    public static func decode(_ text: some StringProtocol, plusIsSpace: Bool = false) -> String? {
        var bytes = Array(text.utf8)
        if plusIsSpace {
            for index in bytes.indices where bytes[index] == UInt8(ascii: "+") { bytes[index] = UInt8(ascii: " ") }
        }
        return String(validating: decode(bytes, 0..<bytes.count), as: UTF8.self)
    }

    /// `text` percent-decoded, bytes that are not UTF-8 replaced (U+FFFD): for what must become a
    /// string whatever it holds (a request's path and query arguments).
    public static func decodeRepairing(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        let bytes = Array(text.utf8)
        return String(decoding: decode(bytes, 0..<bytes.count), as: UTF8.self)
    }

    /// `bytes[range]` with every `%XX` replaced by its byte.
    ///
    /// A `%` that is not followed by two hex digits is kept as it is (browsers do the same), and
    /// `+` stays `+`: the links this service writes encode a space as `%20`, and gateways
    /// percent-encode the whole wrapped URL, so reading `+` as a space could only corrupt a code.
    static func decode(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return [] }
        return bytes.withUnsafeBufferPointer { source in
            [UInt8](unsafeUninitializedCapacity: range.count) { output, written in
                // The output is never longer than the input: each step reads at least what it writes.
                var index = range.lowerBound
                var count = 0
                let end = range.upperBound
                while index < end {
                    let byte = source[index]
                    if byte == UInt8(ascii: "%"), index + 2 < end,
                       let high = LinkBytes.hexValue(source[index + 1]), let low = LinkBytes.hexValue(source[index + 2]) {
                        output[count] = high << 4 | low
                        index += 3
                    } else {
                        output[count] = byte
                        index += 1
                    }
                    count += 1
                }
                written = count
            }
        }
    }

    /// Whether `bytes[range]` holds a `%` at all, so callers can skip a copy.
    static func needsDecoding(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            for index in range where buffer[index] == UInt8(ascii: "%") {
                return true
            }
            return false
        }
    }
}
