import Foundation
import PosternPhoneNumbers

/// A checked phone number in its one E.164 form: the one parser every entry point uses (the API,
/// the CLI, imports, settings), as ``EmailAddress`` is for addresses.
///
/// The numbering plans are libphonenumber's (``NumberingPlan``): `e164` is the library's
/// canonical form, so a number written `+49 0151…`, `+49 00151…`, `0049 151…` or, in `DE`,
/// `0151…` is the one `+49151…` — one identity, hashed and capped once — and `region` is the
/// country whose plan holds it (`JM` for +1 876 …, not "+1"). Logs, metrics and error messages
/// show at most the country code (``redacted``): the whole number is personal data.
public struct PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number as E.164 text, `+4915112345678`.
    public let e164: String
    /// The country calling code, without `+` (`49`; `1` for every country of the North American plan).
    public let countryCallingCode: String
    /// The ISO 3166 alpha-2 region whose numbering plan holds the number (`DE`; `JM`, `US`, `CA`
    /// for +1): what the SMS allowlist and the per-country budgets go by. `001` for the
    /// international networks (+800, +882…), `ZZ` for none (only a ``restored(e164:)`` number).
    public let region: String

    /// Most digits of an E.164 number (country code included).
    public static let maximumDigits = 15

    /// The kinds of line a number that is sent SMS may be: a mobile, or a number the plan cannot
    /// tell from one (the North American plan's). Not fixed lines (no SMS), nor premium-rate,
    /// shared-cost, toll-free, personal (UK 070), universal-access, VoIP, pager or voicemail
    /// numbers: the ranges SMS pumping is paid through, or lines no SMS code reaches.
    static let smsKinds: Set<NumberingPlan.Kind> = [.mobile, .fixedLineOrMobile]

    /// How much a parse checks.
    enum Check {
        /// A number SMS codes go to: valid, and mobile (``smsKinds``).
        case smsRecipient
        /// A valid number of any kind (`--sms-from`).
        case valid
        /// The library's reading only (a number the store wrote after checking it).
        case unchecked
    }

    /// Made only by the parser, which has checked all three.
    init(checkedE164: String, countryCallingCode: String, region: String) {
        self.e164 = checkedE164
        self.countryCallingCode = countryCallingCode
        self.region = region
    }

    /// The digits after the country code.
    public var nationalNumber: Substring { e164.dropFirst(1 + countryCallingCode.count) }

    /// The number as a log line or a page may show it: `+49…`.
    public var redacted: String { "+\(countryCallingCode)…" }

    /// Same as ``redacted``: interpolating a number into a message never shows it whole.
    public var description: String { redacted }

    /// Parses a number SMS codes are to go to, as a user (or an operator, or an import file) typed it.
    ///
    /// Surrounding whitespace is trimmed; spaces, dashes, dots and parentheses are stripped. A
    /// number without `+` is national: read in `defaultRegion` (ISO 3166 alpha-2, `DE`), its trunk
    /// prefix (`0`, or `1` in the North American plan) dropped, or its international prefix (`00`,
    /// `011`) read as `+`; refused without a region. A trunk prefix kept after the country code
    /// (`+49 0151…`, even twice) is dropped. Refused: letters, extensions (`x12`, `ext. 12`,
    /// `;ext=12`, `#12`), control and invisible characters, a `+` elsewhere than first, a country
    /// code that starts with 0 or is not assigned, more than 15 digits, a number outside its
    /// country's plan (`+491234`), and a number that is not a mobile's (premium rate
    /// `+49900…`, shared cost, toll free, fixed lines…: ``smsKinds``).
    /// - Throws: `PhoneNumberError` naming what is wrong, never echoing the input.
    public static func parse(_ input: String, defaultRegion: String?) throws(PhoneNumberError) -> PhoneNumber {
        try read(input, defaultRegion: defaultRegion, check: .smsRecipient)
    }

    /// Parses the operator's sender number (`--sms-from`): international form, valid in its
    /// country's plan, of any kind (a provider's number may be a toll-free or personal one).
    /// - Throws: `PhoneNumberError` as ``parse(_:defaultRegion:)`` does, but for the kind.
    public static func parseSender(_ input: String) throws(PhoneNumberError) -> PhoneNumber {
        try read(input, defaultRegion: nil, check: .valid)
    }

    /// Reads `input` under `check`.
    static func read(_ input: String, defaultRegion: String?, check: Check) throws(PhoneNumberError) -> PhoneNumber {
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

        let dialled: String
        let region: String?
        if plus {
            guard digits.count <= maximumDigits else { throw PhoneNumberError(.tooLong) }
            guard let first = digits.first else { throw PhoneNumberError(.tooShort) }
            guard first != UInt8(ascii: "0") else { throw PhoneNumberError(.countryCodeZero) }
            (dialled, region) = ("+" + String(decoding: digits, as: UTF8.self), nil)
        } else {
            guard let regionCode = defaultRegion else { throw PhoneNumberError(.nationalWithoutRegion) }
            guard let named = PhoneRegion.named(regionCode) else { throw PhoneNumberError(.unknownRegion) }
            // Room for the longest international prefix (`0011`) before the 15 digits.
            guard digits.count <= maximumDigits + 4 else { throw PhoneNumberError(.tooLong) }
            (dialled, region) = (String(decoding: digits, as: UTF8.self), named.code)
        }
        let number = try canonical(dialled, region: region)
        guard number.e164.utf8.count - 1 <= maximumDigits else { throw PhoneNumberError(.tooLong) }
        switch check {
        case .unchecked:
            break
        case .valid, .smsRecipient:
            guard number.isValid else {
                switch number.length {
                case .tooShort, .possibleLocalOnly: throw PhoneNumberError(.tooShort)
                case .tooLong: throw PhoneNumberError(.tooLong)
                case .invalidCountryCode: throw PhoneNumberError(.unknownCountryCode)
                case .possible, .invalid: throw PhoneNumberError(.invalidNumber)
                }
            }
            if check == .smsRecipient, !smsKinds.contains(number.kind) { throw PhoneNumberError(.notMobile) }
        }
        return PhoneNumber(checkedE164: number.e164, countryCallingCode: String(number.callingCode), region: number.region)
    }

    /// The library's reading of `text` (only digits and a leading `+` by now), with the trunk
    /// prefix dropped however often it was kept after the country code: the library drops one
    /// (`+49 0151…`), and a number it finds invalid is read again without each further leading
    /// zero (`+49 00151…`), so that every way of writing a number is the one number — or else
    /// each extra zero would be a number of its own to the per-number caps and the one-account rule.
    static func canonical(_ text: String, region: String?) throws(PhoneNumberError) -> NumberingPlan.Number {
        var number: NumberingPlan.Number
        switch NumberingPlan.parse(text, region: region) {
        case .success(let read):
            number = read
        case .failure(let failure):
            switch failure {
            case .invalidCountryCode: throw PhoneNumberError(.unknownCountryCode)
            case .notANumber, .tooShortAfterInternationalPrefix, .tooShort: throw PhoneNumberError(.tooShort)
            case .tooLong: throw PhoneNumberError(.tooLong)
            case .failed: throw PhoneNumberError(.invalidNumber)
            }
        }
        let prefix = "+\(number.callingCode)"
        var national = number.e164.dropFirst(prefix.count)
        // Two more at most: `+49 000151…` is no one's way of writing a number.
        for _ in 0..<2 where !number.isValid && national.first == "0" {
            national = national.dropFirst()
            guard case .success(let again) = NumberingPlan.parse(prefix + national, region: nil) else { break }
            if again.isValid { number = again }
        }
        return number
    }

    /// Rebuilds a number the store wrote after parsing it; not for user input. Not checked again
    /// against the plan: a row written under older metadata is still the number it was.
    /// - Throws: `PhoneNumberError` when the text is not E.164 (a corrupt row).
    public static func restored(e164: String) throws(PhoneNumberError) -> PhoneNumber {
        guard e164.hasPrefix("+") else { throw PhoneNumberError(.nationalWithoutRegion) }
        return try read(e164, defaultRegion: nil, check: .unchecked)
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
