import Foundation
import PosternCrypto

/// The cache rules of one provider's JWKS, as a value with no I/O: when the keys must be fetched,
/// how long a fetched set is fresh (its `Cache-Control: max-age`, within bounds), and that a token
/// naming an unknown `kid` causes at most one fetch a minute (else anyone could make this server
/// fetch on every request by sending made-up `kid`s). The fetcher that holds it (*next*:
/// PosternMail's libcurl client) asks ``decision(keyID:algorithm:now:)``, fetches when told, and
/// reports with ``store(_:cacheControl:now:)`` or ``fetchFailed(now:)``.
public struct ProviderKeyCache: Sendable {
    /// What to do before checking a token.
    public enum Decision: Sendable {
        /// Check the token with these keys.
        case use(JSONWebKeySet)
        /// Fetch the JWKS first.
        case fetch
        /// No keys, and a fetch was tried too recently to try again: refuse the token.
        case unavailable
    }

    /// The shortest time a fetched set is kept, whatever its `Cache-Control` says, in seconds.
    public static let minimumLifetime: Int64 = 300
    /// The longest, so that a key the provider withdraws stops verifying within a day.
    public static let maximumLifetime: Int64 = 86_400
    /// The least time between two fetches caused by tokens (an unknown `kid`, or no keys yet).
    public static let refetchInterval: Int64 = 60

    /// The last set fetched, nil before the first success.
    public private(set) var keys: JSONWebKeySet?
    private var freshUntil: Int64 = .min
    private var lastFetchAt: Int64?

    /// An empty cache: the first token fetches.
    public init() {}

    /// What to do before checking a token whose header names `keyID` and `algorithm`, at `now`.
    public func decision(keyID: String, algorithm: JSONWebToken.Algorithm, now: Int64) -> Decision {
        let mayFetch = lastFetchAt.map { now - $0 >= Self.refetchInterval } ?? true
        guard let keys else { return mayFetch ? .fetch : .unavailable }
        if now >= freshUntil, mayFetch { return .fetch }
        if keys.key(id: keyID, algorithm: algorithm) == nil, mayFetch { return .fetch }
        // Stale keys whose refetch failed a moment ago still verify: providers publish a new key
        // well before they sign with it, and an outage of theirs should not sign everyone out.
        return .use(keys)
    }

    /// Keeps a fetched set, fresh for its `Cache-Control` header's `max-age` within the bounds.
    public mutating func store(_ keys: JSONWebKeySet, cacheControl: String?, now: Int64) {
        self.keys = keys
        lastFetchAt = now
        freshUntil = now + Self.lifetime(cacheControl: cacheControl)
    }

    /// Records a failed fetch: it counts against ``refetchInterval``; the old keys stay.
    public mutating func fetchFailed(now: Int64) { lastFetchAt = now }

    /// How long a set is fresh: `max-age` clamped to ``minimumLifetime``…``maximumLifetime``;
    /// the minimum when the header is missing, has no valid `max-age`, or says `no-store`/`no-cache`.
    public static func lifetime(cacheControl: String?) -> Int64 {
        guard let cacheControl else { return minimumLifetime }
        var maxAge: Int64?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let trimmed = directive.trimmingCharacters(in: .whitespaces)
            if trimmed == "no-store" || trimmed == "no-cache" { return minimumLifetime }
            if trimmed.hasPrefix("max-age="), let seconds = Int64(trimmed.dropFirst("max-age=".count)), seconds >= 0 {
                maxAge = seconds
            }
        }
        return min(max(maxAge ?? minimumLifetime, minimumLifetime), maximumLifetime)
    }
}
