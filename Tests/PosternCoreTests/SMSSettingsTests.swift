import Foundation
import PosternCore
import Testing

@Suite("SMS settings")
struct SMSSettingsTests {
    func resolve(_ flags: [String: String]) throws(SettingsError) -> Settings {
        try Settings.resolve(flags: flags, environment: [:], file: [:])
    }

    @Test("defaults: file:./sms-out, no region and so no country, the caps of the issue")
    func defaults() throws {
        let s = try resolve([:])
        #expect(s.sms.transport == .file(directory: "./sms-out"))
        let config = s.smsConfiguration
        #expect(config.countries.isEmpty && config.defaultRegion == nil)
        #expect(config.numberInterval == 60 && config.numberPerHour == 5 && config.ipPerHour == 10)
        #expect(config.defaultCountryPerHour == 100 && config.globalPerDay == 1000 && !config.phoneSignIn)
    }

    @Test("the region sets the default allowlist; --sms-countries takes regions and the calling codes of one country")
    func countries() throws {
        #expect(try resolve(["default-region": "de"]).smsConfiguration.countries == ["DE"])
        #expect(try resolve(["default-region": "US"]).smsConfiguration.countries == ["US"])
        #expect(try resolve(["default-region": "DE", "sms-countries": "AT, +41,us"]).smsConfiguration.countries == ["AT", "CH", "US"])
        let budgets = try resolve(["sms-country-budgets": "49=500, US=20, GB=0"]).smsConfiguration.countryPerHour
        #expect(budgets == ["DE": 500, "US": 20, "GB": 0])
    }

    @Test("a calling code several countries share is refused, naming them", arguments: [
        ["sms-countries": "+1"], ["sms-countries": "DE,44"], ["sms-countries": "+7"], ["sms-country-budgets": "1=200"],
    ])
    func sharedCallingCode(flags: [String: String]) {
        do {
            _ = try resolve(flags)
            Issue.record("accepted \(flags)")
        } catch {
            #expect(error.message.contains("is the calling code of") && error.message.contains("name the regions"), "\(error.message)")
        }
    }

    @Test("transports parse; Twilio's SIDs and the sender are checked", arguments: [
        ("twilio:AC0123456789abcdef0123456789abcdef", true), ("twilio:AC123", false), ("twilio:", false),
        ("json:https://sms.example.com/send", true), ("json:ftp://x", false), ("json:", false), ("file:", false),
        ("file:/var/sms", true), ("smtp://x", false), ("json:https://user:secret@sms.example.com/send", false),
        ("json:https://sms.example.com/send?to=user@example.com", true),
    ])
    func transports(value: String, valid: Bool) {
        #expect(((try? resolve(["sms-transport": value])) != nil) == valid, "\(value)")
    }

    @Test("bad SMS settings name the setting and never echo a number", arguments: [
        ["default-region": "XX"], ["default-region": "001"], ["sms-countries": "+0"], ["sms-countries": "001"], ["sms-from": "+491234"], ["sms-countries": "Narnia"], ["sms-countries": "+28"],
        ["sms-from": "+49 151 1234 5678 9012 34"], ["sms-from": "TWELVECHARSX"], ["sms-from": "12345"],
        ["sms-twilio-messaging-service-sid": "MG1"], ["sms-twilio-base-url": "api.twilio.com"], ["sms-country-budgets": "49=lots"],
        ["sms-per-day": "-1"], ["sms-timeout": "0"], ["sms-retry-base": "0"],
    ])
    func refusals(flags: [String: String]) {
        do {
            _ = try resolve(flags)
            Issue.record("accepted \(flags)")
        } catch {
            let flag = flags.keys.first ?? ""
            #expect(error.message.hasPrefix("--\(flag): "), "\(error.message)")
            #expect(!error.message.contains("1234 5678"))
        }
    }

    @Test("the sender is kept as E.164 or as an alphanumeric ID")
    func sender() throws {
        #expect(try resolve(["sms-from": "+1 (500) 555-0006"]).sms.from == "+15005550006")
        #expect(try resolve(["sms-from": "Postern"]).sms.from == "Postern")
    }

    @Test("every SMS setting has --help text and an environment variable")
    func help() {
        for flag in ["default-region", "sms-countries", "sms-transport", "sms-from", "sms-twilio-auth-token-file", "sms-per-day"] {
            let descriptor = Settings.descriptors.first { $0.flag == flag }
            #expect(descriptor != nil && descriptor?.help.isEmpty == false && descriptor?.environment.hasPrefix("POSTERN_") == true, "\(flag)")
        }
    }
}
