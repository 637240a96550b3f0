/// The sessions' persister: refresh tokens by the SHA-256 of their value, in rotating families, and
/// the sessions their owners see (``DeviceSession``, one per family: `sessions`).
public protocol SessionReader {
    /// The refresh token whose SHA-256 is `hash`.
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
    /// Whether any token of `family` is revoked (an OpenID Connect grant's access tokens die with
    /// it: userinfo asks).
    func isRefreshFamilyRevoked(_ family: String) throws -> Bool
    /// The sessions of account `uid` that are not revoked and expire after `now`, newest first.
    func deviceSessions(uid: String, now: Int64) throws -> [DeviceSession]
    /// The session whose public id is `id` (revoked ones are gone).
    func deviceSession(id: String) throws -> DeviceSession?
}

/// Session changes.
public protocol SessionWriter: SessionReader {
    /// Records a refresh token.
    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    /// Marks a token as exchanged for its successor.
    func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws
    /// Revokes every token of a family, and forgets its session row; returns how many were live.
    func revokeRefreshFamily(_ family: String) throws -> Int
    /// Revokes every token of an account, and forgets its session rows; returns how many were live.
    func revokeRefreshTokens(uid: String) throws -> Int
    /// Revokes the tokens of an account's sessions that signed in with `method`, and forgets
    /// their session rows; returns how many were live.
    func revokeRefreshTokens(uid: String, method: String) throws -> Int
    /// Records the session of a new family. Throws `StoreError.duplicate` for a taken id or family.
    func insertDeviceSession(_ session: DeviceSession) throws
    /// A refresh of `family` at `at`: its session's last use and expiry move on (one UPDATE).
    /// Returns the session's public id; nil when the family has none (issued before sessions were kept).
    func touchDeviceSession(family: String, at: Int64, expiresAt: Int64) throws -> String?
    /// Forgets at most `limit` refresh tokens (live, rotated or revoked) that expired at or before
    /// `horizon`; returns how many.
    func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int
    /// Forgets at most `limit` session rows that expired at or before `horizon`; returns how many.
    func pruneDeviceSessions(expiredBy horizon: Int64, limit: Int) throws -> Int
}
