import PosternCrypto

/// The toll-fraud gate every SMS passes before it is queued: one entry point, called in the
/// same write as ``SMSOutboxWriter/enqueueSMS(_:recipient:now:giveUpAt:)``.
///
/// SMS pumping — an attacker making a sign-up form send SMS to premium numbers it is paid for —
/// costs the operator per message, so the gate checks, in order: the country allowlist (by the
/// region whose numbering plan holds the number, not its calling code); that the
/// caller is signed in to an account with a proved address or a phone (unless `--phone-sign-in`:
/// an anonymous session costs one request, so it buys no SMS); the client IP's hourly cap; the number's
/// cooldown (60 s) and hourly cap (5); the country's hourly budget and the global daily cap, each
/// first through the client network's share of it (``SMSConfiguration/networkSharePercent``: an
/// IPv4 /24 or IPv6 /48 takes at most 10 %, so a few addresses cannot close a country for
/// everyone — they did, filling DE's hour in 0.2 s from 10 addresses). The
/// number's own caps refuse nothing: they answer ``Decision/silenced`` and the caller answers as
/// if it had sent (a 429 would tell a stranger that the number was just texted). All of it
/// is counted in the database (`rate_events`, `rate_windows`), so it holds across daemons, under
/// keyed hashes (the key ring's rate-bucket key): never a number or an IP in the clear. A refusal
/// rolls the caller's write back, so a refused SMS counts against nothing.
public final class SMSAdmission: Sendable {
    let configuration: SMSConfiguration
    let keys: KeyRingCache
    let metrics: SMSMetrics
    let logger: Logger?
    /// One log line per cap and window, not one per refusal.
    private let logThrottle = LogThrottle()

    /// An admission under `configuration`; its buckets are keyed with the key ring's active
    /// action-code key (the rate-limit buckets' key).
    public init(configuration: SMSConfiguration, keys: KeyRingCache, metrics: SMSMetrics = SMSMetrics(), logger: Logger? = nil) {
        self.configuration = configuration
        self.keys = keys
        self.metrics = metrics
        self.logger = logger
    }

    /// The rolling day of the global cap, in seconds.
    public static let day: Int64 = 86_400

    /// Who asks for an SMS, as the signed-in-only gate sees it.
    public enum Caller: Sendable, Hashable {
        /// No session.
        case signedOut
        /// A session of an account with neither a proved address nor a phone (an anonymous one,
        /// one `POST /v1/accounts/anonymous` away, or an imported address never confirmed).
        case unproved
        /// A session of an account with a proved address or a phone.
        case identified

        /// The caller signed in to `account` (nil: nobody).
        public static func of(_ account: Account?) -> Caller {
            guard let account else { return .signedOut }
            let provedAddress = account.email != nil && account.emailVerified
            return provedAddress || account.providers.contains(.phone) ? .identified : .unproved
        }
    }

    /// What the gate decided for an SMS it did not refuse.
    public enum Decision: Sendable, Hashable {
        /// Queue it.
        case send
        /// The number was texted within its cool-off, or is past its hourly cap: queue nothing,
        /// record nothing that would change what was sent before, and answer exactly as `send`
        /// does. Counted (`postern_sms_caps_hit_total{cap}`) and logged without the number.
        case silenced
    }

    /// A keyed hash of `text` under `kind`: 16 bytes, no number or IP in the clear.
    func bucket(_ kind: String, _ text: String) -> [UInt8] {
        // Inside the caller's transaction: the ring as loaded, not reloaded (a reload reads the store).
        Array(keys.lastLoaded.actionCodes.activeMAC.authenticate(Array("postern-sms|\(kind)|\(text)".utf8)).prefix(16))
    }

    /// Admits one SMS to `number`, asked for from `clientIP` by `caller`,
    /// counting it against every cap in `tx` (the caller's write, which then queues it unless
    /// the answer is ``Decision/silenced``; the client IP's cap counts a silenced one too, as it
    /// counts any other).
    /// - Throws: `AuthError.smsCountryNotAllowed` for a country outside the allowlist;
    ///   `AuthError.invalidIDToken` when SMS needs a signed-in caller (no `--phone-sign-in`) and
    ///   this one is not, `AuthError.anonymousAccount` when its account has no proved address and
    ///   no phone; `AuthError.tooManyAttempts` (429, `retryAfter`) past any cap: the same
    ///   answer whatever the number; a store failure as it comes (the caller's write maps it).
    public func admit(_ number: PhoneNumber, clientIP: String?, caller: Caller, now: Int64, tx: any LimitWriter) throws(AuthError) -> Decision {
        let config = configuration
        // By region, not calling code: +1 876 is Jamaica, not the United States.
        guard config.countries.contains(number.region) else {
            metrics.capHit(.country)
            throw .smsCountryNotAllowed
        }
        switch caller {
        case .identified:
            break
        case _ where config.phoneSignIn:
            break
        case .signedOut:
            metrics.capHit(.signedOut)
            throw .invalidIDToken
        case .unproved:
            metrics.capHit(.unprovedAccount)
            throw .anonymousAccount("An SMS is sent only for an account with a proved address or a phone number.")
        }
        do {
            // The IP first: past its cap, every number gets the one answer (a number's own cooldown
            // would otherwise say which numbers were sent an SMS lately).
            if config.ipPerHour > 0, let clientIP,
                let wait = try tx.rateLimit(bucket: bucket("ip", clientIP), now: now, interval: 0, perHour: config.ipPerHour)
            {
                metrics.capHit(.ip)
                throw AuthError.tooManyAttempts(retryAfter: wait)
            }
            if config.numberInterval > 0 || config.numberPerHour > 0,
                let wait = try tx.rateLimit(
                    bucket: bucket("number", number.e164), now: now, interval: config.numberInterval, perHour: config.numberPerHour)
            {
                let cap: SMSMetrics.Cap = wait <= config.numberInterval ? .numberCooldown : .numberHourly
                metrics.capHit(cap)
                // One line a minute per cap: an attack on many numbers must not flood the log.
                logOnce(cap.rawValue, until: now + 60) {
                    $0.info("sms not sent again: the number's cap", ["cap": cap.rawValue, "country": "+\(number.countryCallingCode)"])
                }
                return .silenced
            }
            let network = clientIP.map(Self.network(ofClientKey:))
            let budget = config.hourlyBudget(region: number.region)
            if let network, let share = config.networkShare(of: budget),
                let wait = try tx.countInWindow(
                    bucket: bucket("country-network", "\(number.region)|\(network)"), now: now, window: RateLimitPolicy.window,
                    limit: share)
            {
                metrics.capHit(.networkShare)
                throw AuthError.tooManyAttempts(retryAfter: wait)
            }
            if budget > 0,
                let wait = try tx.countInWindow(
                    bucket: bucket("country", number.region), now: now, window: RateLimitPolicy.window, limit: budget)
            {
                metrics.capHit(.countryHourly)
                logOnce("country-\(number.region)", until: now + wait) {
                    $0.warning("sms country budget reached", ["country": number.region, "per_hour": String(budget)])
                }
                throw AuthError.tooManyAttempts(retryAfter: wait)
            }
            if let network, let share = config.networkShare(of: config.globalPerDay),
                let wait = try tx.countInWindow(bucket: bucket("day-network", network), now: now, window: Self.day, limit: share)
            {
                metrics.capHit(.networkShare)
                throw AuthError.tooManyAttempts(retryAfter: wait)
            }
            if config.globalPerDay > 0,
                let wait = try tx.countInWindow(bucket: bucket("global", "day"), now: now, window: Self.day, limit: config.globalPerDay)
            {
                metrics.capHit(.globalDaily)
                logOnce("global", until: now + wait) {
                    $0.warning(
                        "sms global daily cap reached",
                        ["country": "+\(number.countryCallingCode)", "per_day": String(config.globalPerDay), "until": String(now + wait)])
                }
                throw AuthError.tooManyAttempts(retryAfter: wait)
            }
            // Counted as queued here, where every SMS but the operator's test passes (a store that
            // runs a write twice may count it twice: a counter in memory, see `Store`).
            metrics.count(.queued, callingCode: number.countryCallingCode)
            return .send
        } catch let error as AuthError {
            throw error
        } catch let error as StoreError {
            throw .unavailable(error.description)
        } catch {
            throw .internalError("\(error)")
        }
    }

    /// The client network a client key (``clientIP`` as the HTTP layer writes it: an IPv4 address,
    /// or an IPv6 address's /64 in canonical form, `2001:db8:1:2::/64`) belongs to, for the
    /// shares: an IPv4 /24 (`192.0.2.0/24`), an IPv6 /48 (`2001:db8:1::/48`); anything else, itself.
    static func network(ofClientKey key: String) -> String {
        // A limit key is an address or an IPv6 /64 (`IPAddress.limitKey`): its address part.
        let address = key.split(separator: "/", maxSplits: 1).first.map(String.init) ?? key
        return IPAddress(address)?.networkKey ?? key
    }

    /// Runs `write` with the logger unless `key`'s line was written for a window that has not ended.
    private func logOnce(_ key: String, until end: Int64, _ write: (Logger) -> Void) {
        logThrottle.once(key, until: end, logger: logger, write)
    }
}
