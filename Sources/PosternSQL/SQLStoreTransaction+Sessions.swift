import PosternCore
import PosternCrypto

/// Refresh tokens (``SessionWriter``).
extension SQLStoreTransaction {
    // MARK: refresh tokens

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try db.first(
            "SELECT family, uid, auth_time, method, created_at, expires_at, rotated_at, revoked, client_id FROM refresh_tokens WHERE token_hash = ?",
            [.blob(hash)]
        ) { row in
            RefreshTokenRecord(
                hash: hash, family: row.text(0) ?? "", uid: row.text(1) ?? "", authTime: row.integer(2),
                method: row.text(3) ?? "", createdAt: row.integer(4), expiresAt: row.integer(5),
                rotatedAt: row.optionalInteger(6), revoked: row.integer(7) != 0, clientID: row.text(8))
        }
    }

    public func isRefreshFamilyRevoked(_ family: String) throws -> Bool {
        try db.first("SELECT 1 FROM refresh_tokens WHERE family = ? AND revoked = 1 LIMIT 1", [.text(family)]) { _ in true } ?? false
    }

    public func insertRefreshToken(_ t: RefreshTokenRecord) throws {
        try db.execute(
            "INSERT INTO refresh_tokens (token_hash, family, uid, auth_time, method, created_at, expires_at, rotated_at, revoked, client_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .blob(t.hash), .text(t.family), .text(t.uid), .integer(t.authTime), .text(t.method), .integer(t.createdAt),
                .integer(t.expiresAt), t.rotatedAt.map(SQLValue.integer) ?? .null, .integer(t.revoked ? 1 : 0),
                t.clientID.map(SQLValue.text) ?? .null,
            ])
    }

    public func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws {
        try db.execute("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?", [.integer(at), .blob(hash)])
    }

    public func revokeRefreshFamily(_ family: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE family = ? AND revoked = 0", [.text(family)])
    }

    public func revokeRefreshTokens(uid: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND revoked = 0", [.text(uid)])
    }

    public func revokeRefreshTokens(uid: String, method: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND method = ? AND revoked = 0", [.text(uid), .text(method)])
    }

    public func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "refresh_tokens", key: "token_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}
