import PosternCore
import PosternCrypto

/// Refresh tokens and the sessions their owners see (``SessionWriter``).
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
        try db.execute("DELETE FROM sessions WHERE family = ?", [.text(family)])
        return try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE family = ? AND revoked = 0", [.text(family)])
    }

    public func revokeRefreshTokens(uid: String) throws -> Int {
        try db.execute("DELETE FROM sessions WHERE uid = ?", [.text(uid)])
        return try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND revoked = 0", [.text(uid)])
    }

    public func revokeRefreshTokens(uid: String, method: String) throws -> Int {
        try db.execute("DELETE FROM sessions WHERE uid = ? AND method = ?", [.text(uid), .text(method)])
        return try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND method = ? AND revoked = 0", [.text(uid), .text(method)])
    }

    public func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "refresh_tokens", key: "token_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }

    // MARK: sessions

    private static let sessionColumns = "id, uid, family, device_name, network, method, client_id, created_at, last_used_at, expires_at"

    private static func deviceSession(_ row: any SQLRow) -> DeviceSession {
        DeviceSession(
            id: row.text(0) ?? "", uid: row.text(1) ?? "", family: row.text(2) ?? "", deviceName: row.text(3), network: row.text(4),
            method: row.text(5) ?? "", clientID: row.text(6), createdAt: row.integer(7), lastUsedAt: row.integer(8),
            expiresAt: row.integer(9))
    }

    public func deviceSessions(uid: String, now: Int64) throws -> [DeviceSession] {
        var sessions: [DeviceSession] = []
        try db.query(
            "SELECT \(Self.sessionColumns) FROM sessions WHERE uid = ? AND expires_at > ? ORDER BY created_at DESC, id DESC",
            [.text(uid), .integer(now)]
        ) { sessions.append(Self.deviceSession($0)) }
        return sessions
    }

    public func deviceSession(id: String) throws -> DeviceSession? {
        try db.first("SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?", [.text(id)], Self.deviceSession)
    }

    public func insertDeviceSession(_ s: DeviceSession) throws {
        try db.execute(
            "INSERT INTO sessions (\(Self.sessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .text(s.id), .text(s.uid), .text(s.family), s.deviceName.map(SQLValue.text) ?? .null, s.network.map(SQLValue.text) ?? .null,
                .text(s.method), s.clientID.map(SQLValue.text) ?? .null, .integer(s.createdAt), .integer(s.lastUsedAt),
                .integer(s.expiresAt),
            ])
    }

    public func touchDeviceSession(family: String, at: Int64, expiresAt: Int64) throws -> String? {
        try db.first(
            "UPDATE sessions SET last_used_at = ?, expires_at = ? WHERE family = ? RETURNING id",
            [.integer(at), .integer(expiresAt), .text(family)]
        ) { $0.text(0) } ?? nil
    }

    public func pruneDeviceSessions(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "sessions", key: "id", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}
