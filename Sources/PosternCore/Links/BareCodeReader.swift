import PosternCrypto

/// Recognises a pasted code without a link: an oobCode on its own, or the 6-digit code.
enum BareCodeReader {
    /// Shortest text taken for a bare oobCode; codes are far longer, words rarely this long.
    static let minimumOobCodeLength = 16
    /// Longest text taken for a bare oobCode.
    static let maximumOobCodeLength = 4096

    /// The code `text` holds once trimmed, or nil. `123456`, `123 456` and `123-456` are a
    /// 6-digit code; 16 or more base64url characters are an oobCode.
    static func read(_ text: [UInt8]) -> PastedAction? {
        let trimmed = LinkBytes.trimmingWhitespace(text)
        if let digits = sixDigits(trimmed) {
            return .sixDigitCode(digits)
        }
        guard trimmed.count >= minimumOobCodeLength, trimmed.count <= maximumOobCodeLength,
              trimmed.allSatisfy({ Base64URL.isSymbol($0) }) else { return nil }
        return .oobCode(String(decoding: trimmed, as: UTF8.self))
    }

    private static func sixDigits(_ bytes: [UInt8]) -> String? {
        var digits = bytes
        if bytes.count == 7, bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-") {
            digits.remove(at: 3)
        }
        guard digits.count == 6, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return String(decoding: digits, as: UTF8.self)
    }
}
