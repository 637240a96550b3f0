import PosternCrypto

/// The toll-fraud gate every SMS passes before it is queued: one entry point, called in the
/// same write as ``SMSOutboxWriter/enqueueSMS(_:recipient:now:giveUpAt:)``.
///
/// Contract stage: checks the country allowlist and the signed-in rule; the caps follow.
public final class SMSAdmission: Sendable {
    let configuration: SMSConfiguration
    let keys: KeyRingCache
    let metrics: SMSMetrics
    let logger: Logger?

    /// An admission under `configuration`; its buckets are keyed with the key ring's active
    /// action-code key (the rate-limit buckets' key).
    public init(configuration: SMSConfiguration, keys: KeyRingCache, metrics: SMSMetrics = SMSMetrics(), logger: Logger? = nil) {
        self.configuration = configuration
        self.keys = keys
        self.metrics = metrics
        self.logger = logger
    }

    /// Admits one SMS to `number`, asked for from `clientIP` by a caller who is `signedIn` or not,
    /// counting it against every cap in `tx` (the caller's write, which then queues it).
    /// - Throws: `AuthError.smsCountryNotAllowed` for a country outside the allowlist;
    ///   `AuthError.invalidIDToken` when SMS needs a signed-in caller (no `--phone-sign-in`) and
    ///   this one is not; `AuthError.tooManyAttempts` (429, `retryAfter`) past any cap: the same
    ///   answer whatever the number.
    public func admit(_ number: PhoneNumber, clientIP: String?, signedIn: Bool, now: Int64, tx: any StoreWriter) throws(AuthError) {
        guard configuration.countries.contains(number.countryCallingCode) else {
            metrics.capHit(.country)
            throw .smsCountryNotAllowed
        }
        guard signedIn || configuration.phoneSignIn else {
            metrics.capHit(.signedOut)
            throw .invalidIDToken
        }
    }
}
