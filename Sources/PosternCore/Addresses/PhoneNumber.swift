import Foundation

/// A checked phone number in E.164 form: the one parser every entry point uses (the API, the
/// CLI, imports, settings), as ``EmailAddress`` is for addresses.
///
/// `e164` is `+`, the country calling code (first digit not 0) and the national number, at most
/// 15 digits in all. Logs, metrics and error messages show at most the country code
/// (``redacted``): the whole number is personal data.
public struct PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number as E.164 text, `+4915112345678`.
    public let e164: String
    /// The country calling code, without `+` (`49`; `1` for every country of the North American plan).
    public let countryCallingCode: String

    /// Most digits of an E.164 number (country code included).
    public static let maximumDigits = 15
    /// Fewest digits after the country code (Niue and Saint Helena have four).
    public static let minimumNationalDigits = 4

    /// Made only by the parser, which has checked both.
    init(checkedE164: String, countryCallingCode: String) {
        self.e164 = checkedE164
        self.countryCallingCode = countryCallingCode
    }

    /// The digits after the country code.
    public var nationalNumber: Substring { e164.dropFirst(1 + countryCallingCode.count) }

    /// The number as a log line or a page may show it: `+49…`.
    public var redacted: String { "+\(countryCallingCode)…" }

    /// Same as ``redacted``: interpolating a number into a message never shows it whole.
    public var description: String { redacted }

    /// Parses what a user (or an operator, or an import file) typed.
    ///
    /// Surrounding whitespace is trimmed; spaces, dashes, dots and parentheses are stripped. A
    /// number without `+` is national: read in `defaultRegion` (ISO 3166 alpha-2, `DE`), its trunk
    /// prefix (`0`, or `1` in the North American plan) dropped, or its international prefix (`00`,
    /// `011`) read as `+`; refused without a region. Refused: letters, extensions (`x12`,
    /// `ext. 12`, `;ext=12`, `#12`), control and invisible characters, a `+` elsewhere than
    /// first, a country code that starts with 0 or is not assigned, more than 15 digits.
    /// - Throws: `PhoneNumberError` naming what is wrong, never echoing the input.
    public static func parse(_ input: String, defaultRegion: String?) throws(PhoneNumberError) -> PhoneNumber {
        var digits: [UInt8] = []
        var plus = false
        var extensionMarker = false
        var letters: [Unicode.Scalar] = []
        // "+49 (0)151 …": the trunk prefix in parentheses, which international form leaves out.
        let text = input.replacingOccurrences(of: "(0)", with: " ")
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                throw PhoneNumberError(.controlCharacter)
            default: break
            }
            if scalar.value >= 0x30 && scalar.value <= 0x39 {
                digits.append(UInt8(scalar.value))
                continue
            }
            switch scalar {
            case "+":
                guard !plus, digits.isEmpty else { throw PhoneNumberError(.misplacedPlus) }
                plus = true
            case "-", ".", "(", ")":
                break
            case "#", ";", ",", "*", "=":
                extensionMarker = true
            default:
                if scalar.properties.generalCategory == .spaceSeparator { continue }
                if scalar.properties.isAlphabetic {
                    letters.append(scalar)
                    continue
                }
                throw PhoneNumberError(.invalidCharacter)
            }
        }
        if !letters.isEmpty {
            let word = String(String.UnicodeScalarView(letters)).lowercased()
            if ["x", "ext", "ext=", "extension", "tel", "ext.", "durchwahl", "dw"].contains(word) || word.hasPrefix("ext") {
                throw PhoneNumberError(.extensionNotAllowed)
            }
            throw PhoneNumberError(.letters)
        }
        if extensionMarker { throw PhoneNumberError(.extensionNotAllowed) }
        guard !digits.isEmpty || plus else { throw PhoneNumberError(.empty) }

        var international: [UInt8]
        if plus {
            international = digits
        } else {
            guard let regionCode = defaultRegion else { throw PhoneNumberError(.nationalWithoutRegion) }
            guard let region = PhoneRegion.named(regionCode) else { throw PhoneNumberError(.unknownRegion) }
            international = region.internationalDigits(national: digits)
        }
        guard international.count <= maximumDigits else { throw PhoneNumberError(.tooLong) }
        guard let first = international.first else { throw PhoneNumberError(.tooShort) }
        guard first != UInt8(ascii: "0") else { throw PhoneNumberError(.countryCodeZero) }
        guard let codeLength = PhoneRegion.countryCodeLength(international) else { throw PhoneNumberError(.unknownCountryCode) }
        guard international.count - codeLength >= minimumNationalDigits else { throw PhoneNumberError(.tooShort) }
        let e164 = String(decoding: international, as: UTF8.self)
        return PhoneNumber(checkedE164: "+" + e164, countryCallingCode: String(e164.prefix(codeLength)))
    }

    /// Rebuilds a number the store wrote after parsing it; not for user input.
    /// - Throws: `PhoneNumberError` when the text is not E.164 (a corrupt row).
    public static func restored(e164: String) throws(PhoneNumberError) -> PhoneNumber {
        guard e164.hasPrefix("+") else { throw PhoneNumberError(.nationalWithoutRegion) }
        return try parse(e164, defaultRegion: nil)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self = try PhoneNumber.restored(e164: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(e164)
    }
}
