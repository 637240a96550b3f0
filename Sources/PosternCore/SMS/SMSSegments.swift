/// How many SMS a text costs: GSM 03.38 7-bit (160 characters in one message, 153 a part when
/// concatenated; a character of the extension table, such as `€` or `{`, takes two) when every
/// character is in its alphabet, else UCS-2 (70 UTF-16 units, 67 a part).
public struct SMSSegments: Sendable, Hashable {
    /// The alphabet the text is sent in.
    public enum Encoding: String, Sendable, Hashable {
        case gsm7 = "GSM-7"
        case ucs2 = "UCS-2"
    }

    public let encoding: Encoding
    /// Septets (GSM-7) or UTF-16 code units (UCS-2).
    public let units: Int
    /// Messages the text is sent as.
    public let parts: Int

    /// A count as given (for comparisons).
    public init(encoding: Encoding, units: Int, parts: Int) {
        self.encoding = encoding
        self.units = units
        self.parts = parts
    }

    /// The count for `text`.
    public init(_ text: String) {
        var septets = 0
        var isGSM = true
        for scalar in text.unicodeScalars {
            if Self.basic.contains(scalar) {
                septets += 1
            } else if Self.extended.contains(scalar) {
                septets += 2
            } else {
                isGSM = false
                break
            }
        }
        if isGSM {
            encoding = .gsm7
            units = septets
            parts = septets <= 160 ? 1 : (septets + 152) / 153
        } else {
            encoding = .ucs2
            units = text.utf16.count
            parts = units <= 70 ? 1 : (units + 66) / 67
        }
    }

    /// The single-message limit of the text's encoding (160 or 70).
    public var singleLimit: Int { encoding == .gsm7 ? 160 : 70 }

    /// The GSM 03.38 basic character set.
    static let basic: Set<Unicode.Scalar> = Set(
        ("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
            + "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà").unicodeScalars)
    /// The extension table: each is sent as an escape and the character (two septets).
    static let extended: Set<Unicode.Scalar> = Set("^{}\\[~]|€\u{0C}".unicodeScalars)
}
