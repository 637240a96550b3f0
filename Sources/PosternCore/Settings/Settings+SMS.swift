import Foundation

/// The SMS settings (`--sms-*`, `--default-region`): where SMS go and the toll-fraud caps.
public struct SMSSettings: Sendable, Equatable {
    /// ISO 3166 region national phone input is read in; nil: international form only.
    public var defaultRegion: String?
    /// Allowed ISO 3166 regions; nil: the default region.
    public var countries: Set<String>?
    public var transport: SMSTransportConfig = .embeddedDefault
    /// `From`: a number in E.164, or an alphanumeric sender ID (1–11 letters and digits).
    public var from: String?
    /// Twilio's Messaging Service SID (`MG…`), sent instead of `From`.
    public var messagingServiceSID: String?
    /// The file holding the Twilio auth token.
    public var authTokenFile: String?
    /// Twilio's API origin (tests point it at loopback).
    public var twilioBaseURL = "https://api.twilio.com"
    /// The file of `whsec_…` secrets the JSON transport signs with.
    public var jsonSecretFile: String?
    /// Extra CA certificates (PEM) for the provider's HTTPS.
    public var caFile: String?
    /// Seconds one provider call may take.
    public var timeout: Int64 = 10
    public var numberInterval: Int64 = 60
    public var numberPerHour: Int64 = 5
    public var ipPerHour: Int64 = 10
    public var countryPerHour: Int64 = 100
    public var countryBudgets: [String: Int64] = [:]
    public var perDay: Int64 = 1000
    /// Percent of a country's hourly budget and of the daily cap one client network may take.
    public var networkShare: Int64 = 10
    /// Seconds before a failed SMS is tried again the first time; doubled after each failure.
    public var retryBase: Int64 = 10

    public init() {}
}

extension Settings {
    /// The SMS configuration the admission, the flows and the worker share (`phoneSignIn` is set
    /// by the phone sign-in setting).
    public var smsConfiguration: SMSConfiguration {
        var config = SMSConfiguration(defaultRegion: sms.defaultRegion, countries: sms.countries)
        config.numberInterval = sms.numberInterval
        config.numberPerHour = sms.numberPerHour
        config.ipPerHour = sms.ipPerHour
        config.defaultCountryPerHour = sms.countryPerHour
        config.countryPerHour = sms.countryBudgets
        config.globalPerDay = sms.perDay
        config.networkSharePercent = sms.networkShare
        let policy = config.policy
        config.policy = DeliveryPolicy(
            baseDelay: sms.retryBase, maximumDelay: policy.maximumDelay, maximumAge: policy.maximumAge,
            lease: max(policy.lease, 4 * sms.timeout))
        return config
    }

    /// A list of countries: ISO regions (`DE`), or calling codes (`+49`, `49`) of one region only.
    /// A calling code several regions share (+1, +7, +44…) is refused, naming them: read as all of
    /// them it would let SMS go to every Caribbean country of the North American plan.
    static func parseCountries(_ text: String) throws(SettingsError) -> Set<String> {
        var regions: Set<String> = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let digits = item.hasPrefix("+") ? String(item.dropFirst()) : item
            if !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
                let sharing = PhoneRegion.sharing(callingCode: digits)
                guard let only = sharing.first else { throw SettingsError("\(item) is not a calling code of any country") }
                guard sharing.count == 1 else {
                    let names = sharing.map(\.code)
                    let shown = names.prefix(8).joined(separator: ", ") + (names.count > 8 ? ", …" : "")
                    throw SettingsError(
                        "+\(digits) is the calling code of \(names.count) countries (\(shown)): name the regions SMS may go to, such as \(only.code)")
                }
                regions.insert(only.code)
            } else if let region = PhoneRegion.named(item) {
                regions.insert(region.code)
            } else {
                throw SettingsError("\(item) is neither an ISO 3166 region (DE) nor a calling code of one country (+49)")
            }
        }
        return regions
    }

    static let smsDescriptors: [Descriptor] = [
        text("default-region", "POSTERN_DEFAULT_REGION", "ISO 3166 region (DE, US, …) that phone numbers typed without + and a country code are read in; also the default --sms-countries, that region alone (default: none, numbers must be international)") { s, v throws(SettingsError) in
            guard let region = PhoneRegion.named(v.trimmingCharacters(in: .whitespaces)) else {
                throw SettingsError("must be an ISO 3166 region with a numbering plan, such as DE or US (\(PhoneRegion.knownCodes.count) are known)")
            }
            s.sms.defaultRegion = region.code
        },
        text("sms-countries", "POSTERN_SMS_COUNTRIES", "comma-separated countries SMS may go to, as ISO 3166 regions (DE, US) or the calling code of one country (+49; a code several countries share, such as +1, +7 or +44, is refused: name the regions); a number's country is the region whose numbering plan holds it (+1 876 is JM, not US); every other is refused with SMS_COUNTRY_NOT_ALLOWED (default: the --default-region; none without it)") { s, v throws(SettingsError) in
            s.sms.countries = try parseCountries(v)
        },
        text("sms-transport", "POSTERN_SMS_TRANSPORT", "where SMS go: file:DIR (one file per SMS), twilio:ACCOUNT_SID (Twilio's Messages API; needs --sms-twilio-auth-token-file and --sms-from or --sms-twilio-messaging-service-sid), or json:URL (a JSON POST signed like a webhook; needs --sms-json-secret-file) (default file:./sms-out)") { s, v throws(SettingsError) in
            s.sms.transport = try SMSTransportConfig.parse(v)
        },
        text("sms-from", "POSTERN_SMS_FROM", "the sender: a number in E.164 (+15017122661) or an alphanumeric sender ID of 1 to 11 letters and digits, where the country allows one") { s, v throws(SettingsError) in
            let value = v.trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("+") {
                let number: PhoneNumber
                do throws(PhoneNumberError) { number = try PhoneNumber.parseSender(value) } catch {
                    throw SettingsError(error.description)
                }
                s.sms.from = number.e164
            } else {
                guard (1...11).contains(value.count), value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " ") }),
                    value.contains(where: \.isLetter)
                else { throw SettingsError("must be +E.164 or 1 to 11 letters and digits with at least one letter") }
                s.sms.from = value
            }
        },
        text("sms-twilio-messaging-service-sid", "POSTERN_SMS_TWILIO_MESSAGING_SERVICE_SID", "Twilio Messaging Service (MG…) to send from, instead of --sms-from") { s, v throws(SettingsError) in
            guard v.count == 34, v.hasPrefix("MG"), v.dropFirst(2).allSatisfy(\.isHexDigit) else {
                throw SettingsError("must be MG followed by 32 hexadecimal digits")
            }
            s.sms.messagingServiceSID = v
        },
        text("sms-twilio-auth-token-file", "POSTERN_SMS_TWILIO_AUTH_TOKEN_FILE", "file holding the Twilio auth token (read at start, sent as HTTP Basic password, never logged)") { s, v in s.sms.authTokenFile = v },
        text("sms-twilio-base-url", "POSTERN_SMS_TWILIO_BASE_URL", "Twilio's API origin (default https://api.twilio.com; for a test server or a regional edge)") { s, v throws(SettingsError) in
            guard v.hasPrefix("https://") || v.hasPrefix("http://"), !v.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" }) else {
                throw SettingsError("must be an http(s) origin such as https://api.twilio.com")
            }
            s.sms.twilioBaseURL = v.hasSuffix("/") ? String(v.dropLast()) : v
        },
        text("sms-json-secret-file", "POSTERN_SMS_JSON_SECRET_FILE", "file of whsec_… secrets the json: transport signs each SMS with (Standard Webhooks headers, as webhooks)") { s, v in s.sms.jsonSecretFile = v },
        text("sms-ca-file", "POSTERN_SMS_CA_FILE", "extra CA certificates (PEM) to trust for the SMS provider's HTTPS (certificate checks stay on)") { s, v in s.sms.caFile = v },
        number("sms-timeout", "POSTERN_SMS_TIMEOUT", "seconds one call to the SMS provider may take (default 10)", minimum: 1, maximum: 60) { s, v in s.sms.timeout = v },
        number("sms-number-interval", "POSTERN_SMS_NUMBER_INTERVAL", "least seconds between two SMS to one number (default 60)", minimum: 0, maximum: 86_400) { s, v in s.sms.numberInterval = v },
        number("sms-number-per-hour", "POSTERN_SMS_NUMBER_PER_HOUR", "most SMS to one number in an hour (default 5)", minimum: 0, maximum: 1000) { s, v in s.sms.numberPerHour = v },
        number("sms-ip-per-hour", "POSTERN_SMS_IP_PER_HOUR", "most SMS one client IP may cause in an hour (default 10; 0: no cap)", minimum: 0, maximum: 1_000_000) { s, v in s.sms.ipPerHour = v },
        number("sms-country-per-hour", "POSTERN_SMS_COUNTRY_PER_HOUR", "most SMS to one country in an hour, unless --sms-country-budgets says otherwise (default 100; 0: no cap)", minimum: 0, maximum: 10_000_000) { s, v in s.sms.countryPerHour = v },
        text("sms-country-budgets", "POSTERN_SMS_COUNTRY_BUDGETS", "hourly SMS budgets of single countries, REGION=N comma-separated (DE=500,US=200; a calling code of one country, 49=500, also does)") { s, v throws(SettingsError) in
            var budgets: [String: Int64] = [:]
            for item in v.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, let budget = Int64(parts[1]), budget >= 0, budget <= 10_000_000 else {
                    throw SettingsError("\(item) must be REGION=N, such as DE=500")
                }
                guard let code = try parseCountries(parts[0]).first else { throw SettingsError("\(item) names no country") }
                budgets[code] = budget
            }
            s.sms.countryBudgets = budgets
        },
        number("sms-retry-base", "POSTERN_SMS_RETRY_BASE", "seconds before a failed SMS is retried the first time, doubled after each failure up to 5 minutes; given up at the code's expiry or after 15 minutes (default 10)", minimum: 1, maximum: 300) { s, v in s.sms.retryBase = v },
        number("sms-network-share", "POSTERN_SMS_NETWORK_SHARE", "percent of a country's hourly SMS budget, and of the daily cap, that one client network (an IPv4 /24, an IPv6 /48) may take, so a few addresses cannot close a country for everyone (default 10; 0: no share)", minimum: 0, maximum: 100) { s, v in s.sms.networkShare = v },
        number("sms-per-day", "POSTERN_SMS_PER_DAY", "most SMS a day, all countries together; past it every request gets 429 and the log says so (default 1000; 0: no cap)", minimum: 0, maximum: 100_000_000) { s, v in s.sms.perDay = v },
    ]
}
