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
        /// The region whose numbering plan holds the number (libphonenumber's answer).
        let plan: String
        var testDescription: String { "\(input) (\(region ?? "no region"))" }
    }

    static let valid: [Valid] = [
        .init(input: "+4915112345678", region: nil, e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "+49 151 1234-5678", region: nil, e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "+49 (0)151 12345678", region: nil, e164: "+4915112345678", country: "49", plan: "DE"),
        // The trunk prefix kept after the country code, once or twice: the one number.
        .init(input: "+49 0151 12345678", region: nil, e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "+49 00151 12345678", region: nil, e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "  +1 (415) 555-2671 ", region: nil, e164: "+14155552671", country: "1", plan: "US"),
        .init(input: "+1.415.555.2671", region: nil, e164: "+14155552671", country: "1", plan: "US"),
        .init(input: "+44 7400 123456", region: nil, e164: "+447400123456", country: "44", plan: "GB"),
        .init(input: "+33 6 12 34 56 78", region: nil, e164: "+33612345678", country: "33", plan: "FR"),
        .init(input: "+81 90-1234-5678", region: nil, e164: "+819012345678", country: "81", plan: "JP"),
        .init(input: "+91 98765 43210", region: nil, e164: "+919876543210", country: "91", plan: "IN"),
        .init(input: "+7 912 345-67-89", region: nil, e164: "+79123456789", country: "7", plan: "RU"),
        .init(input: "+353 85 123 4567", region: nil, e164: "+353851234567", country: "353", plan: "IE"),
        .init(input: "+683 888 4012", region: nil, e164: "+6838884012", country: "683", plan: "NU"),
        .init(input: "+86 138 0013 8000", region: nil, e164: "+8613800138000", country: "86", plan: "CN"),
        // A calling code is not a country: the plan says whose number it is.
        .init(input: "+1 876 210 1234", region: nil, e164: "+18762101234", country: "1", plan: "JM"),
        .init(input: "+1 242 359 1234", region: nil, e164: "+12423591234", country: "1", plan: "BS"),
        .init(input: "+44 7624 123456", region: nil, e164: "+447624123456", country: "44", plan: "IM"),
        .init(input: "+44 7911 123456", region: nil, e164: "+447911123456", country: "44", plan: "GG"),
        .init(input: "+7 701 234 5678", region: nil, e164: "+77012345678", country: "7", plan: "KZ"),
        // National input, with a default region: the trunk prefix dropped, the country code added.
        .init(input: "0151 12345678", region: "DE", e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "0151/12345678".replacingOccurrences(of: "/", with: " "), region: "de", e164: "+4915112345678", country: "49", plan: "DE"),
        .init(input: "(415) 555-2671", region: "US", e164: "+14155552671", country: "1", plan: "US"),
        .init(input: "1 415 555 2671", region: "US", e164: "+14155552671", country: "1", plan: "US"),
        .init(input: "876 210 1234", region: "US", e164: "+18762101234", country: "1", plan: "JM"),
        .init(input: "07400 123456", region: "GB", e164: "+447400123456", country: "44", plan: "GB"),
        .init(input: "312 345 6789", region: "IT", e164: "+393123456789", country: "39", plan: "IT"),
        .init(input: "06 30 123 4567", region: "HU", e164: "+36301234567", country: "36", plan: "HU"),
        // The international prefix of the region read as +.
        .init(input: "0044 7400 123456", region: "DE", e164: "+447400123456", country: "44", plan: "GB"),
        .init(input: "011 49 151 12345678", region: "US", e164: "+4915112345678", country: "49", plan: "DE"),
        // International input ignores the region.
        .init(input: "+44 7400 123456", region: "DE", e164: "+447400123456", country: "44", plan: "GB"),
    ]

    @Test("valid mobile numbers of several countries in their one form, separators stripped", arguments: valid)
    func parsesValid(_ row: Valid) throws {
        let number = try PhoneNumber.parse(row.input, defaultRegion: row.region)
        #expect(number.e164 == row.e164)
        #expect(number.countryCallingCode == row.country)
        #expect(number.region == row.plan)
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
        // Outside its country's plan: no such number.
        .init(input: "+491234", region: nil, reason: .invalidNumber),
        .init(input: "+4990012345678", region: nil, reason: .invalidNumber),
        .init(input: "+1 555 123 4567", region: nil, reason: .invalidNumber),
        .init(input: "+123456789012345", region: nil, reason: .tooLong),
        // Valid, but no mobile's: premium rate, shared cost, toll free, personal, VoIP, UAN, pager,
        // fixed lines, an international network.
        .init(input: "+49 900 1234567", region: nil, reason: .notMobile),
        .init(input: "+49 180 12345", region: nil, reason: .notMobile),
        .init(input: "+49 800 1234567890", region: nil, reason: .notMobile),
        .init(input: "+1 900 234 5678", region: nil, reason: .notMobile),
        .init(input: "+1 800 234 5678", region: nil, reason: .notMobile),
        .init(input: "+44 70 1234 5678", region: nil, reason: .notMobile),
        .init(input: "+44 56 1234 5678", region: nil, reason: .notMobile),
        .init(input: "+44 55 1234 5678", region: nil, reason: .notMobile),
        .init(input: "+44 7640 123456", region: nil, reason: .notMobile),
        .init(input: "+33 8 91 12 34 56", region: nil, reason: .notMobile),
        .init(input: "+49 30 123456", region: nil, reason: .notMobile),
        .init(input: "030 123456", region: "DE", reason: .notMobile),
        .init(input: "+882 130 00000", region: nil, reason: .notMobile),
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
        .init(input: "015112345678", region: "001", reason: .unknownRegion),
        .init(input: "015112345678", region: "ZZ", reason: .unknownRegion),
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

    @Test("the default allowlist is the default region alone, none without a region")
    func defaultCountries() {
        #expect(SMSConfiguration(defaultRegion: "DE").countries == ["DE"])
        #expect(SMSConfiguration(defaultRegion: "us").countries == ["US"])
        #expect(SMSConfiguration().countries.isEmpty)
    }

    @Test("regions are the numbering plans': a calling code may be many countries, 001 and ZZ are none")
    func regions() {
        #expect(PhoneRegion.named("de") == PhoneRegion.named("DE") && PhoneRegion.named("DE")?.callingCode == "49")
        #expect(PhoneRegion.named("JM")?.callingCode == "1")
        for notACountry in ["001", "ZZ", "XX", "D", "DEU", ""] { #expect(PhoneRegion.named(notACountry) == nil, "\(notACountry)") }
        #expect(PhoneRegion.sharing(callingCode: "49").map(\.code) == ["DE"])
        let plus1 = Set(PhoneRegion.sharing(callingCode: "1").map(\.code))
        #expect(plus1.isSuperset(of: ["US", "CA", "JM", "DO", "BS", "TC"]) && PhoneRegion.sharing(callingCode: "1").first?.code == "US")
        #expect(Set(PhoneRegion.sharing(callingCode: "44").map(\.code)) == ["GB", "GG", "IM", "JE"])
        #expect(PhoneRegion.sharing(callingCode: "28").isEmpty && PhoneRegion.sharing(callingCode: "800").isEmpty)
        #expect(PhoneRegion.knownCodes.count > 200 && PhoneRegion.knownCodes.contains("TC"))
    }

    @Test("the library is read from eight threads at once: every answer is the one answer")
    func concurrentParses() async throws {
        let rows = Self.valid
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for index in 0..<400 {
                        let row = rows[(index + task) % rows.count]
                        let number = try? PhoneNumber.parse(row.input, defaultRegion: row.region)
                        if number?.e164 != row.e164 || number?.region != row.plan { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }

    @Test("a stored number is read back as written, not checked again; the sender may be any valid kind")
    func restoredAndSender() throws {
        // A fixed line (no SMS to it now) that a row may hold: still the number it was.
        #expect(try PhoneNumber.restored(e164: "+4930123456").e164 == "+4930123456")
        #expect(try PhoneNumber.restored(e164: "+49015112345678").e164 == "+4915112345678")
        #expect(throws: PhoneNumberError(.nationalWithoutRegion)) { try PhoneNumber.restored(e164: "015112345678") }
        #expect(try PhoneNumber.parseSender("+1 500 555 0006").e164 == "+15005550006")
        #expect(throws: PhoneNumberError(.invalidNumber)) { try PhoneNumber.parseSender("+491234") }
    }
}
