/// The sessions' persister: refresh tokens by the SHA-256 of their value, in rotating families.
public protocol SessionReader {
    /// The refresh token whose SHA-256 is `hash`.
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
    /// Whether any token of `family` is revoked (an OpenID Connect grant's access tokens die with
    /// it: userinfo asks).
    func isRefreshFamilyRevoked(_ family: String) throws -> Bool
}

/// Session changes.
public protocol SessionWriter: SessionReader {
    /// Records a refresh token.
    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    /// Marks a token as exchanged for its successor.
    func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws
    /// Revokes every token of a family; returns how many were live.
    func revokeRefreshFamily(_ family: String) throws -> Int
    /// Revokes every token of an account; returns how many were live.
    func revokeRefreshTokens(uid: String) throws -> Int
    /// Revokes the tokens of an account's sessions that signed in with `method`; returns how many were live.
    func revokeRefreshTokens(uid: String, method: String) throws -> Int
    /// Forgets at most `limit` refresh tokens (live, rotated or revoked) that expired at or before
    /// `horizon`; returns how many.
    func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int
}
