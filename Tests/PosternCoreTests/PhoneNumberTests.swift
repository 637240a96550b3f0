import Foundation
import PosternCore
import Testing

@Suite("E.164 phone numbers: the one parser")
struct PhoneNumberTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        let input: String
        let region: String?
        let e164: String
        let country: String
        var testDescription: String { "\(input) (\(region ?? "no region"))" }
    }

    static let valid: [Valid] = [
        .init(input: "+4915112345678", region: nil, e164: "+4915112345678", country: "49"),
        .init(input: "+49 151 1234-5678", region: nil, e164: "+4915112345678", country: "49"),
        .init(input: "+49 (0)151 12345678", region: nil, e164: "+4915112345678", country: "49"),
        .init(input: "  +1 (415) 555-2671 ", region: nil, e164: "+14155552671", country: "1"),
        .init(input: "+1.415.555.2671", region: nil, e164: "+14155552671", country: "1"),
        .init(input: "+44 7911 123456", region: nil, e164: "+447911123456", country: "44"),
        .init(input: "+33 6 12 34 56 78", region: nil, e164: "+33612345678", country: "33"),
        .init(input: "+81 90-1234-5678", region: nil, e164: "+819012345678", country: "81"),
        .init(input: "+91 98765 43210", region: nil, e164: "+919876543210", country: "91"),
        .init(input: "+7 912 345-67-89", region: nil, e164: "+79123456789", country: "7"),
        .init(input: "+353 85 123 4567", region: nil, e164: "+353851234567", country: "353"),
        .init(input: "+683 4002", region: nil, e164: "+6834002", country: "683"),
        .init(input: "+86 138 0013 8000", region: nil, e164: "+8613800138000", country: "86"),
        .init(input: "+123456789012345", region: nil, e164: "+123456789012345", country: "1"),
        // National input, with a default region: the trunk prefix dropped, the country code added.
        .init(input: "0151 12345678", region: "DE", e164: "+4915112345678", country: "49"),
        .init(input: "0151/12345678".replacingOccurrences(of: "/", with: " "), region: "de", e164: "+4915112345678", country: "49"),
        .init(input: "(415) 555-2671", region: "US", e164: "+14155552671", country: "1"),
        .init(input: "1 415 555 2671", region: "US", e164: "+14155552671", country: "1"),
        .init(input: "07911 123456", region: "GB", e164: "+447911123456", country: "44"),
        .init(input: "312 345 6789", region: "IT", e164: "+393123456789", country: "39"),
        .init(input: "06 30 123 4567", region: "HU", e164: "+36301234567", country: "36"),
        // The international prefix of the region read as +.
        .init(input: "0044 7911 123456", region: "DE", e164: "+447911123456", country: "44"),
        .init(input: "011 49 151 12345678", region: "US", e164: "+4915112345678", country: "49"),
        // International input ignores the region.
        .init(input: "+44 7911 123456", region: "DE", e164: "+447911123456", country: "44"),
    ]

    @Test("valid numbers of several countries, separators stripped", arguments: valid)
    func parsesValid(_ row: Valid) throws {
        let number = try PhoneNumber.parse(row.input, defaultRegion: row.region)
        #expect(number.e164 == row.e164)
        #expect(number.countryCallingCode == row.country)
        #expect(number.redacted == "+\(row.country)…")
        #expect("\(number)" == "+\(row.country)…", "interpolation never shows the number")
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let input: String
        let region: String?
        let reason: PhoneNumberError.Reason
        var testDescription: String { "\(input.debugDescription) → \(reason)" }
    }

    static let invalid: [Invalid] = [
        .init(input: "", region: nil, reason: .empty),
        .init(input: "   ", region: "DE", reason: .empty),
        .init(input: "+", region: nil, reason: .tooShort),
        .init(input: "+1234567890123456", region: nil, reason: .tooLong),
        .init(input: "+49 1511 2345 6789 01", region: nil, reason: .tooLong),
        .init(input: "+0123456789", region: nil, reason: .countryCodeZero),
        .init(input: "+049 151 12345678", region: nil, reason: .countryCodeZero),
        .init(input: "+28 1234 5678", region: nil, reason: .unknownCountryCode),
        .init(input: "+999 1234 5678", region: nil, reason: .unknownCountryCode),
        .init(input: "+49 151", region: nil, reason: .tooShort),
        .init(input: "+1-800-FLOWERS", region: nil, reason: .letters),
        .init(input: "+49 151 1234567a", region: nil, reason: .letters),
        .init(input: "+49 151 12345678 ext. 12", region: nil, reason: .extensionNotAllowed),
        .init(input: "+49 151 12345678 x12", region: nil, reason: .extensionNotAllowed),
        .init(input: "+1 415 555 2671;ext=12", region: nil, reason: .extensionNotAllowed),
        .init(input: "+1 415 555 2671#12", region: nil, reason: .extensionNotAllowed),
        .init(input: "+1 415 555 2671,12", region: nil, reason: .extensionNotAllowed),
        .init(input: "+49 151 1234\n5678", region: nil, reason: .controlCharacter),
        .init(input: "+49 151 1234\r\n", region: nil, reason: .controlCharacter),
        .init(input: "+49 151\t12345678", region: nil, reason: .controlCharacter),
        .init(input: "+49 151 1234\u{0}5678", region: nil, reason: .controlCharacter),
        .init(input: "+49 151 \u{200B}12345678", region: nil, reason: .controlCharacter),
        .init(input: "+49 151 \u{202E}12345678", region: nil, reason: .controlCharacter),
        .init(input: "+49 151 1234/5678", region: nil, reason: .invalidCharacter),
        .init(input: "+49 ١٥١ 12345678", region: nil, reason: .invalidCharacter),
        .init(input: "+４９ 151 12345678", region: nil, reason: .invalidCharacter),
        .init(input: "49+15112345678", region: nil, reason: .misplacedPlus),
        .init(input: "++4915112345678", region: nil, reason: .misplacedPlus),
        .init(input: "015112345678", region: nil, reason: .nationalWithoutRegion),
        .init(input: "4915112345678", region: nil, reason: .nationalWithoutRegion),
        .init(input: "015112345678", region: "XX", reason: .unknownRegion),
        .init(input: "0151 1234 5678 9012 34", region: "DE", reason: .tooLong),
    ]

    @Test("refused with a typed reason that never echoes the number", arguments: invalid)
    func refusesInvalid(_ row: Invalid) {
        #expect(throws: PhoneNumberError(row.reason)) { try PhoneNumber.parse(row.input, defaultRegion: row.region) }
        let message = PhoneNumberError(row.reason).description
        #expect(!message.isEmpty)
        let digits = row.input.filter(\.isNumber)
        if digits.count >= 4 { #expect(!message.contains(String(digits.suffix(4)))) }
    }

    @Test("every reason has its own sentence, and none holds a digit string from the input")
    func messagesDistinct() {
        let messages = PhoneNumberError.Reason.allCases.map { PhoneNumberError($0).description }
        #expect(Set(messages).count == messages.count)
    }

    @Test("Codable writes the E.164 text and reads it back through the parser")
    func codable() throws {
        let number = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        let data = try JSONEncoder().encode([number])
        #expect(String(decoding: data, as: UTF8.self) == #"["+4915112345678"]"#)
        #expect(try JSONDecoder().decode([PhoneNumber].self, from: data) == [number])
        #expect(throws: (any Error).self) { try JSONDecoder().decode([PhoneNumber].self, from: Data(#"["+0123"]"#.utf8)) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode([PhoneNumber].self, from: Data(#"["015112345678"]"#.utf8)) }
    }

    @Test("the SMS intent's storage text reads back, and nothing else does")
    func intentStorage() {
        for intent in [SMSIntent.phoneClaim(claimID: "c_1"), .phoneSignIn(requestID: "r:2"), .test(reference: "t")] {
            #expect(SMSIntent(storageText: intent.storageText) == intent)
        }
        #expect(SMSIntent(storageText: "sign-in:r_1") == nil)
        #expect(SMSIntent(storageText: "phone-claim") == nil)
    }

    @Test("the default allowlist is the default region's country, none without a region")
    func defaultCountries() {
        #expect(SMSConfiguration(defaultRegion: "DE").countries == ["49"])
        #expect(SMSConfiguration(defaultRegion: "us").countries == ["1"])
        #expect(SMSConfiguration().countries.isEmpty)
    }
}
