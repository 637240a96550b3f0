import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// What an SMS pumper and a cap dodger try against the phone numbers: the allowlist read as a
/// calling code shared by many countries, numbers that do not exist or cost the operator, and one
/// number written several ways to be several numbers.
@Suite("Phone numbers under attack: regions not calling codes, no premium ranges, one number one identity")
struct PhoneNumberAbuseTests {
    /// A harness whose SMS settings are `flags` as the command line gives them, phone sign-in on
    /// (signed-out callers get SMS: the allowlist and the caps are the only gate).
    static func harness(_ flags: [String: String], caps: Bool = false) throws -> FlowHarness {
        let sms = try Settings.resolve(flags: flags, environment: [:], file: [:]).smsConfiguration
        return try FlowHarness {
            $0.phoneSignIn = true
            $0.sms = sms
            $0.sms.phoneSignIn = true
            if !caps {
                $0.sms.numberInterval = 0
                $0.sms.numberPerHour = 0
                $0.sms.ipPerHour = 0
                $0.sms.defaultCountryPerHour = 0
                $0.sms.globalPerDay = 0
            }
        }
    }

    static func send(_ h: FlowHarness, _ number: String) throws {
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
    }

    /// The code a send to `number` is refused with; nil when it is sent.
    static func refusal(_ h: FlowHarness, _ number: String) -> String? {
        do {
            try send(h, number)
            return nil
        } catch let error as AuthError {
            return error.code
        } catch {
            return "\(error)"
        }
    }

    @Test("--default-region US allows the US, not Jamaica, the Dominican Republic, the Bahamas or Turks and Caicos (all +1)")
    func usIsNotTheCaribbean() throws {
        let h = try Self.harness(["default-region": "US"])
        // Valid mobile (or fixed-or-mobile) numbers of each, from the numbering plans' own ranges.
        for pumped in ["+1 876 210 1234", "+1 809 234 5678", "+1 242 359 1234", "+1 649 231 1234"] {
            #expect(Self.refusal(h, pumped) == "SMS_COUNTRY_NOT_ALLOWED", "\(pumped)")
        }
        #expect(h.store.snapshot().sms.isEmpty)
        try Self.send(h, "+1 201 555 0123")
        try Self.send(h, "(201) 555-0124")
        #expect(h.store.snapshot().sms.count == 2)
    }

    @Test("the same for +44 and +7: GB is not the Isle of Man or Guernsey, RU is not Kazakhstan")
    func sharedCallingCodes() throws {
        let h = try Self.harness(["sms-countries": "GB,RU"])
        for pumped in ["+44 7624 123456", "+44 7911 123456", "+7 701 234 5678"] {
            #expect(Self.refusal(h, pumped) == "SMS_COUNTRY_NOT_ALLOWED", "\(pumped)")
        }
        try Self.send(h, "+44 7400 123456")
        try Self.send(h, "+7 912 345 6789")
        #expect(h.store.snapshot().sms.count == 2)
    }

    @Test("numbers that do not exist and premium-rate, shared-cost, toll-free and personal numbers get no SMS")
    func noSuchOrCostlyNumber() throws {
        let h = try Self.harness(["sms-countries": "DE,GB"])
        for number in [
            "+491234", "+4990012345678", "+49 900 1234567", "+49 180 12345", "+49 800 1234567890", "+44 870 123 4567", "+44 800 123 4567",
            "+44 70 1234 5678",
        ] {
            #expect(Self.refusal(h, number) == "INVALID_PHONE_NUMBER", "\(number)")
        }
        #expect(h.store.snapshot().sms.isEmpty)
    }

    @Test("+490151…, +4900151… and 0151… (region DE) are +49151…: the per-number cap counts them together")
    func oneNumberOneCap() throws {
        let h = try Self.harness(["default-region": "DE"], caps: true)
        try Self.send(h, "+4915112345678")
        // The number's own cool-off answers as an accepted send (no oracle) and sends nothing.
        for variant in ["+49015112345678", "+490015112345678", "015112345678", "0049 151 12345678"] {
            #expect(Self.refusal(h, variant) == nil, "\(variant)")
        }
        #expect(h.store.snapshot().sms.count == 1)
        #expect(h.store.snapshot().sms.last?.recipient?.e164 == "+4915112345678")
    }

    @Test("the number signed up as +49151… is the same account when signed in as +490151… or +4900151…")
    func oneNumberOneAccount() throws {
        let h = try Self.harness(["default-region": "DE"])
        func signIn(_ number: String) throws -> LoginDescriptor {
            try Self.send(h, number)
            let code = try #require(try h.lastSMS()).code
            #expect(h.store.snapshot().sms.last?.recipient?.e164 == "+4915112345678", "\(number)")
            return try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: nil, allowMigration: nil)
        }
        let first = try signIn("+4915112345678")
        #expect(first.isNewUser)
        for variant in ["+49015112345678", "+490015112345678", "015112345678"] {
            let again = try signIn(variant)
            #expect(again.uid == first.uid && !again.isNewUser, "\(variant)")
        }
        #expect(h.store.snapshot().accounts.count == 1)
    }
}
