/// Decodes Proofpoint URL Defense v3 rewrites:
/// `https://urldefense.com/v3/__<url with tokens>__;<base64url of the taken characters>!!<tenant>!<signature>$`.
///
/// Proofpoint replaces characters it will not leave in the URL by tokens and keeps the originals,
/// in order, as one UTF-8 string in the base64 part. A `*` takes the next character of that
/// string; `**X` takes a run of the next N characters, N = 2 for `A` up to 65 for `_` in the
/// alphabet `A–Z a–z 0–9 - _`, and advances by N. (Published decoders slice `[0..<N]` instead of
/// `[position..<position+N]`; that is the bug this does not copy.)
package enum ProofpointV3Decoder {
    /// The original URL, or nil when the rewrite is malformed: no `__;`, base64 that does not
    /// decode to UTF-8, an unknown run letter, or tokens asking for more characters than there are.
    ///
    /// `bytes[start...]` is what follows `/v3/__`.
    package static func decode(_ bytes: [UInt8], from start: Int) -> [UInt8]? {
        guard let separator = LinkBytes.firstIndex(of: "__;", in: bytes, from: start, to: bytes.count) else {
            return nil
        }
        var encodedEnd = separator + 3
        while encodedEnd < bytes.count, bytes[encodedEnd] != UInt8(ascii: "!") {
            encodedEnd += 1
        }
        guard let taken = Base64Decoding.decode(bytes, (separator + 3)..<encodedEnd) else { return nil }
        guard let boundaries = characterBoundaries(taken) else { return nil }
        // As the reference decoder does, the URL part is percent-decoded before tokens are replaced.
        let template = PercentDecoding.needsDecoding(bytes, start..<separator)
            ? PercentDecoding.decode(bytes, start..<separator)
            : Array(bytes[start..<separator])

        var output = [UInt8]()
        output.reserveCapacity(template.count + taken.count)
        var character = 0
        let characterCount = boundaries.count - 1
        var index = 0
        while index < template.count {
            let byte = template[index]
            guard byte == UInt8(ascii: "*") else {
                output.append(byte)
                index += 1
                continue
            }
            var taking = 1
            if index + 2 < template.count, template[index + 1] == UInt8(ascii: "*") {
                guard let length = runLength(for: template[index + 2]) else { return nil }
                taking = length
                index += 3
            } else {
                index += 1
            }
            guard characterCount - character >= taking else { return nil }
            output.append(contentsOf: taken[boundaries[character]..<boundaries[character + taking]])
            character += taking
        }
        return output
    }

    /// N for the run letter `letter`: `A` is 2, `_` is 65.
    static func runLength(for letter: UInt8) -> Int? {
        switch letter {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(letter - UInt8(ascii: "A")) + 2
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(letter - UInt8(ascii: "a")) + 28
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(letter - UInt8(ascii: "0")) + 54
        case UInt8(ascii: "-"): 64
        case UInt8(ascii: "_"): 65
        default: nil
        }
    }

    /// Byte offsets where each Unicode scalar of `bytes` starts, plus `bytes.count`; nil when the
    /// bytes are not valid UTF-8. Characters here are scalars, as in the reference decoder.
    private static func characterBoundaries(_ bytes: [UInt8]) -> [Int]? {
        var boundaries = [Int]()
        boundaries.reserveCapacity(bytes.count + 1)
        var index = 0
        while index < bytes.count {
            boundaries.append(index)
            let lead = bytes[index]
            let length: Int
            switch lead {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return nil
            }
            guard index + length <= bytes.count else { return nil }
            index += length
        }
        boundaries.append(bytes.count)
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        return boundaries
    }
}
