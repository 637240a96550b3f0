/// The OpenID Connect provider's reads, part of every `StoreReader`: authorization codes by the
/// SHA-256 of the code (the code itself is never stored).
public protocol OIDCReader {
    /// The authorization code whose SHA-256 is `hash`, consumed or not, until it is pruned.
    func authorizationCode(hash: [UInt8]) throws -> AuthorizationCodeRecord?
}

/// The OpenID Connect provider's changes, part of every `StoreWriter`.
public protocol OIDCWriter: OIDCReader {
    /// Records a new authorization code. Throws `StoreError.duplicate` for a taken hash and
    /// `StoreError.notFound` for an account that does not exist.
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws
    /// Consumes the code whose SHA-256 is `hash` at `now`, atomically: of concurrent callers (on
    /// one daemon or several) exactly one gets `.consumed`, every later one `.replayed`; nil for a
    /// hash that is unknown (never issued, or pruned). Expiry is the caller's to check: an expired
    /// code is consumed like another.
    func consumeAuthorizationCode(hash: [UInt8], at now: Int64) throws -> AuthorizationCodeConsumption?
    /// Forgets at most `limit` codes (consumed or not) that expired at or before `horizon`;
    /// returns how many.
    func pruneAuthorizationCodes(expiredBy horizon: Int64, limit: Int) throws -> Int
}
