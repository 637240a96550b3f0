import Synchronization

/// SMS counters for `/metrics` (`postern_sms_*`): messages queued, sent and dead by country
/// calling code only (never a number), and how often each cap refused one.
public final class SMSMetrics: Sendable {
    /// What a counter counts.
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case queued, sent, dead
    }

    /// Which cap refused an SMS (the `cap` label).
    public enum Cap: String, Sendable, Hashable, CaseIterable {
        case country, signedOut = "signed_out", numberCooldown = "number_cooldown", numberHourly = "number_hourly",
            ip, countryHourly = "country_hourly", globalDaily = "global_daily",
            /// A client network's share of the country's hour or of the day.
            networkShare = "network_share",
            /// A session of an account with no proved address and no phone, without `--phone-sign-in`.
            unprovedAccount = "unproved_account"
    }

    private let counts = Mutex<[Event: [String: Int]]>([:])
    private let caps = Mutex<[Cap: Int]>([:])

    /// Empty counters.
    public init() {}

    /// Counts one message of `event` to the country `callingCode`.
    public func count(_ event: Event, callingCode: String) {
        counts.withLock { $0[event, default: [:]][callingCode, default: 0] += 1 }
    }

    /// Counts one refusal by `cap`.
    public func capHit(_ cap: Cap) { caps.withLock { $0[cap, default: 0] += 1 } }

    /// (event, country code, count) for every counter that counted, sorted.
    public func snapshot() -> [(event: String, country: String, count: Int)] {
        counts.withLock { counts in
            counts.flatMap { event, byCountry in byCountry.map { (event.rawValue, $0.key, $0.value) } }
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { (event: $0.0, country: $0.1, count: $0.2) }
    }

    /// (cap, count) for every cap, zero included, in the order of ``Cap``.
    public func capSnapshot() -> [(cap: String, count: Int)] {
        let hits = caps.withLock { $0 }
        return Cap.allCases.map { (cap: $0.rawValue, count: hits[$0] ?? 0) }
    }
}
