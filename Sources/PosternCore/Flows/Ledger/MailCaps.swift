import Synchronization

/// The mail caps' settings: most mails the public endpoints queue to one recipient domain an hour
/// (`--mail-domain-per-hour`, with per-domain overrides) and to all domains together
/// (`--mail-per-hour-total`). 0 turns a cap off.
public struct MailCapConfiguration: Sendable, Hashable {
    /// Most mails to one domain an hour, for a domain without an override (0: no cap).
    public var domainPerHour: Int64
    /// A cap per domain (lower-case A-label; gmail.com for googlemail.com too) beating
    /// ``domainPerHour`` (0: that domain has no cap).
    public var domainOverrides: [String: Int64]
    /// Most mails to all domains together an hour (0: no cap).
    public var totalPerHour: Int64

    /// Caps as given; the defaults are off (the settings' defaults are 600 and 5,000).
    public init(domainPerHour: Int64 = 0, domainOverrides: [String: Int64] = [:], totalPerHour: Int64 = 0) {
        self.domainPerHour = domainPerHour
        self.domainOverrides = domainOverrides
        self.totalPerHour = totalPerHour
    }

    /// The hourly cap of `domain` (a counted domain: ``CanonicalAddress/domain``), 0 for none.
    public func cap(ofDomain domain: String) -> Int64 { domainOverrides[domain] ?? domainPerHour }

    /// The settings' default cap per domain: 600 an hour, one mail each 6 seconds to one domain.
    public static let defaultDomainPerHour: Int64 = 600
    /// The settings' default cap of all public mail: 5,000 an hour.
    public static let defaultTotalPerHour: Int64 = 5_000

    /// The value of `--mail-domain-per-hour`: `N` or `N,domain=M,…` (a domain's own cap, 0: none).
    /// Domains are lower-cased to IDNA A-labels; googlemail.com is gmail.com, as it is counted.
    /// - Throws: `SettingsError` naming the part that is not a number in range or not a domain.
    public static func parseDomainCaps(_ value: String) throws(SettingsError) -> (perHour: Int64, overrides: [String: Int64]) {
        let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, !first.contains("=") else {
            throw SettingsError("must start with the cap of every domain, such as 600 or 600,gmail.com=5000")
        }
        func count(_ text: String, part: String) throws(SettingsError) -> Int64 {
            guard let n = Int64(text), (0...1_000_000_000).contains(n) else {
                throw SettingsError("\(part.debugDescription): the cap must be a whole number from 0 to 1000000000")
            }
            return n
        }
        let perHour = try count(first, part: first)
        var overrides: [String: Int64] = [:]
        for part in parts.dropFirst() {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 2, !pieces[0].isEmpty else {
                throw SettingsError("\(part.debugDescription) must be domain=N, such as gmail.com=5000")
            }
            var domain: String
            do throws(EmailAddressError) { domain = try EmailAddress.encodeDomain(pieces[0]) } catch {
                throw SettingsError("\(part.debugDescription): \(pieces[0].debugDescription) is not a domain: \(error.description)")
            }
            if domain == "googlemail.com" { domain = "gmail.com" }
            guard overrides[domain] == nil else { throw SettingsError("\(part.debugDescription): \(domain) is given twice") }
            overrides[domain] = try count(pieces[1], part: part)
        }
        return (perHour, overrides)
    }
}

/// The caps on the mail the public endpoints queue (send-link, password sign-up, reset, address
/// verification and change), checked in the write that queues each mail, after its address's own
/// limit: per recipient domain an hour and for all mail an hour, so that a bot with many addresses
/// and many client IPs cannot make Postern mail a provider's users by the thousand and burn the
/// operator's sending reputation.
///
/// Counted in the database in fixed hour windows (`rate_windows`, under keyed hashes of the
/// domain), so the caps hold across daemons. Past a cap the answer is `tooManyAttempts` with the
/// seconds to the window's end: the same for every address at the domain (whether it has an
/// account is never read), and the throw rolls the caller's write back, so nothing is queued and
/// the refused mail counts against nothing. The admin API's mail and the security notices that
/// follow a completed action never pass here.
public final class MailCaps: Sendable {
    /// Which cap refused a mail (the label of `postern_mail_caps_hit_total`).
    public enum Cap: String, Sendable, Hashable, CaseIterable {
        /// The recipient domain's hourly cap.
        case domain
        /// The hourly cap of all public mail.
        case total
    }

    let configuration: MailCapConfiguration
    let keys: KeyRingCache
    let logger: Logger?
    /// One lock-free counter per cap (refusals come in floods).
    private let hits: [MetricCounter] = Cap.allCases.map { _ in MetricCounter() }
    /// One log line per cap (and domain) and window, not one per refusal.
    private let logThrottle = LogThrottle()

    /// Caps under `configuration`, their buckets keyed with the key ring's active action-code key.
    init(configuration: MailCapConfiguration, keys: KeyRingCache, logger: Logger?) {
        self.configuration = configuration
        self.keys = keys
        self.logger = logger
    }

    /// Whether any cap is on (else there is nothing to count).
    var isOn: Bool {
        configuration.totalPerHour > 0 || configuration.domainPerHour > 0 || configuration.domainOverrides.values.contains { $0 > 0 }
    }

    /// `(cap, count)` for every cap, zero included, in the order of ``Cap``.
    public func snapshot() -> [(cap: String, count: Int)] {
        zip(Cap.allCases, hits).map { (cap: $0.rawValue, count: $1.value.load(ordering: .relaxed)) }
    }

    /// A keyed hash of `text` under `kind`: 16 bytes.
    private func bucket(_ kind: String, _ text: String) -> [UInt8] {
        // Inside the caller's transaction: the ring as loaded, not reloaded (a reload reads the store).
        Array(keys.lastLoaded.actionCodes.activeMAC.authenticate(Array("postern-mail-cap|\(kind)|\(text)".utf8)).prefix(16))
    }

    /// Counts one mail to `recipient` at `now` against the domain's cap, then the total, in `tx`
    /// (the write that queues it).
    /// - Throws: `AuthError.tooManyAttempts` (the seconds to the window's end) past a cap: the
    ///   caller's write must be rolled back; a store failure as it comes.
    func admit(_ recipient: CanonicalAddress, now: Int64, tx: any LimitWriter) throws {
        try admit(recipient, now: now) { bucket, limit in
            try tx.countInWindow(bucket: bucket, now: now, window: RateLimitPolicy.window, limit: limit)
        }
    }

    /// ``admit(_:now:tx:)`` on a store several daemons share: counted before the request's write,
    /// outside its transaction (``SharedWindowCounts``). Returns what it counted, for the caller to
    /// put back if the request is then not made.
    /// - Throws: `AuthError.tooManyAttempts` past a cap (nothing stays counted); `unavailable`.
    func admit(_ recipient: CanonicalAddress, now: Int64, counts: SharedWindowCounts) throws -> [SharedWindowCounts.Counted] {
        var counted: [SharedWindowCounts.Counted] = []
        do {
            try admit(recipient, now: now) { bucket, limit in
                guard let one = try counts.count(bucket, now: now, window: RateLimitPolicy.window, limit: limit) else {
                    return max(1, FixedWindow.start(of: now, window: RateLimitPolicy.window) + RateLimitPolicy.window - now)
                }
                counted.append(one)
                return nil
            }
        } catch {
            counts.uncount(counted)
            throw error
        }
        return counted
    }

    /// The caps ``admit(_:now:counts:)`` would count for a mail to `recipient`, for a
    /// ``SharedWindowCounts/restock(_:now:)`` ahead of it.
    func capsWanted(_ recipient: CanonicalAddress, now: Int64) -> [SharedWindowCounts.Wanted] {
        var wanted: [SharedWindowCounts.Wanted] = []
        try? admit(recipient, now: now) { bucket, limit in
            wanted.append(.init(bucket: bucket, limit: limit))
            return nil
        }
        return wanted
    }

    /// The caps in order, each counted by `count` (bucket, limit → nil when counted, else the
    /// seconds to the window's end).
    private func admit(_ recipient: CanonicalAddress, now: Int64, count: ([UInt8], Int64) throws -> Int64?) throws {
        let domain = recipient.domain
        let domainCap = configuration.cap(ofDomain: domain)
        if domainCap > 0, let wait = try count(bucket("domain", domain), domainCap) {
            refuse(.domain, key: "domain|\(domain)", until: now + wait) {
                $0.warning("mail domain cap reached: nothing more is queued to the domain until the hour ends", [
                    "domain": domain, "per_hour": String(domainCap), "until": String(now + wait),
                ])
            }
            throw AuthError.tooManyAttempts(retryAfter: wait)
        }
        let total = configuration.totalPerHour
        if total > 0, let wait = try count(bucket("total", "hour"), total) {
            refuse(.total, key: "total", until: now + wait) {
                $0.warning("mail total cap reached: no public endpoint queues mail until the hour ends", [
                    "domain": domain, "per_hour": String(total), "until": String(now + wait),
                ])
            }
            throw AuthError.tooManyAttempts(retryAfter: wait)
        }
    }

    /// Counts a refusal by `cap` and logs it once per `key` (the cap, and the domain) and window.
    private func refuse(_ cap: Cap, key: String, until end: Int64, _ write: (Logger) -> Void) {
        // A store that runs a write twice may count it twice: a counter in memory (see `Store`).
        hits[Cap.allCases.firstIndex(of: cap) ?? 0].value.add(1, ordering: .relaxed)
        logThrottle.once(key, until: end, logger: logger, write)
    }
}
