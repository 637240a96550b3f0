/// The SMS settings the flows, the admission and the worker share: who may be sent an SMS, and
/// how many (toll fraud — "SMS pumping" — costs the operator real money per message).
public struct SMSConfiguration: Sendable, Hashable {
    /// The region national input is read in (`--default-region`), or nil: international form only.
    public var defaultRegion: String?
    /// ISO 3166 regions SMS may go to (`--sms-countries`; default: the default region), matched
    /// against ``PhoneNumber/region`` — a region, not a calling code: `US` is not Jamaica (+1 876).
    /// Empty: SMS to no country.
    public var countries: Set<String>
    /// Least seconds between two SMS to one number (60).
    public var numberInterval: Int64 = 60
    /// Most SMS to one number in a rolling hour (5).
    public var numberPerHour: Int64 = 5
    /// Most SMS asked for from one client IP in a rolling hour (10; 0: no cap).
    public var ipPerHour: Int64 = 10
    /// Most SMS to one country in an hour, by ISO 3166 region (`--sms-country-budgets DE=500,US=200`);
    /// a country not listed has ``defaultCountryPerHour``.
    public var countryPerHour: [String: Int64] = [:]
    /// The hourly budget of a country without its own (100; 0: no cap).
    public var defaultCountryPerHour: Int64 = 100
    /// Most SMS in a day, all countries together (1000; 0: no cap).
    public var globalPerDay: Int64 = 1000
    /// The share, in percent, of a country's hourly budget and of the daily cap that one client
    /// network — an IPv4 /24, an IPv6 /48 — may take (`--sms-network-share`, 10; 0: no share, one
    /// network may take it all). A few addresses cannot close a country, or the day, for everyone.
    public var networkSharePercent: Int64 = 10
    /// Whether sign-in by phone is on (`--phone-sign-in`): only then may a caller who is not
    /// signed in cause an SMS.
    public var phoneSignIn = false
    /// The retry schedule: as mail's, but given up after 15 minutes (a code is short-lived anyway;
    /// each message's own `giveUpAt` usually comes first).
    public var policy = DeliveryPolicy(baseDelay: 10, maximumDelay: 300, maximumAge: 900, lease: 120)

    /// The defaults: `countries` the default region alone (none without one).
    public init(defaultRegion: String? = nil, countries: Set<String>? = nil) {
        self.defaultRegion = defaultRegion
        self.countries = countries ?? Set([defaultRegion.flatMap(PhoneRegion.named)?.code].compactMap { $0 })
    }

    /// The hourly budget of `region`'s numbers.
    public func hourlyBudget(region: String) -> Int64 { countryPerHour[region] ?? defaultCountryPerHour }

    /// What one client network may take of `budget` (at least 1); nil when shares are off.
    public func networkShare(of budget: Int64) -> Int64? {
        guard networkSharePercent > 0, budget > 0 else { return nil }
        let (product, overflow) = budget.multipliedReportingOverflow(by: networkSharePercent)
        return max(1, overflow ? budget : product / 100)
    }
}
