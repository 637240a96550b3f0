import Foundation
/// base64url without padding (RFC 4648 §5), the alphabet of codes, tokens and JWTs.
public enum Base64URL {
    /// The 64 symbols, in value order.
    public static let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    private static let symbols: [UInt8] = Array(alphabet.utf8)
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, symbol) in symbols.enumerated() { table[Int(symbol)] = UInt8(index) }
        return table
    }()

    /// Whether `byte` is one of the 64 symbols.
    public static func isSymbol(_ byte: UInt8) -> Bool { decodeTable[Int(byte)] != 0xFF }

    /// Characters needed for `count` bytes.
    public static func encodedLength(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some ContiguousBytes) -> String {
        bytes.withUnsafeBytes { input in
            String(unsafeUninitializedCapacity: encodedLength(input.count)) { out in
                encode(input, into: out)
            }
        }
    }

    /// Encodes `input` into `out` (which holds `encodedLength(input.count)` bytes); returns the count.
    @discardableResult
    public static func encode(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        symbols.withUnsafeBufferPointer { table in
            var o = 0
            var i = 0
            let n = input.count
            while i + 3 <= n {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = table[Int(v >> 18 & 63)]
                out[o + 1] = table[Int(v >> 12 & 63)]
                out[o + 2] = table[Int(v >> 6 & 63)]
                out[o + 3] = table[Int(v & 63)]
                i += 3
                o += 4
            }
            let rest = n - i
            if rest == 1 {
                let v = UInt32(input[i]) << 16
                out[o] = table[Int(v >> 18 & 63)]
                out[o + 1] = table[Int(v >> 12 & 63)]
                o += 2
            } else if rest == 2 {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out[o] = table[Int(v >> 18 & 63)]
                out[o + 1] = table[Int(v >> 12 & 63)]
                out[o + 2] = table[Int(v >> 6 & 63)]
                o += 3
            }
            return o
        }
    }

    /// Decodes unpadded base64url; nil when a character is outside the alphabet, the length is
    /// impossible, or the unused trailing bits are not zero (so each byte string has one encoding).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes the UTF-8 bytes of unpadded base64url text; nil as for `decode(_:)`.
    public static func decode(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        let n = input.count
        if n % 4 == 1 { return nil }
        let outCount = n * 3 / 4
        var ok = true
        let result = [UInt8](unsafeUninitializedCapacity: outCount) { out, initialized in
            decodeTable.withUnsafeBufferPointer { table in
                var i = 0
                var o = 0
                var acc: UInt32 = 0
                var bits = 0
                while i < n {
                    let d = table[Int(input[i])]
                    if d == 0xFF { ok = false; break }
                    acc = acc << 6 | UInt32(d)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[o] = UInt8(truncatingIfNeeded: acc >> UInt32(bits))
                        o += 1
                    }
                    i += 1
                }
                if ok && bits > 0 && acc & ((1 << UInt32(bits)) - 1) != 0 { ok = false }
                initialized = ok ? o : 0
            }
        }
        return ok ? result : nil
    }
}
