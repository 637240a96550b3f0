import PosternCore

extension SQLStoreTransaction {
    // MARK: OpenID Connect authorization codes

    private static let codeColumns =
        "code_hash, client_id, uid, redirect_uri, scopes, nonce, code_challenge, auth_time, methods, refresh_family, created_at, expires_at, consumed_at"

    private func readCode(_ row: any SQLRow) throws -> AuthorizationCodeRecord {
        guard let hash = row.blob(0), let client = row.text(1), let uid = row.text(2), let redirect = row.text(3),
            let scopes = row.text(4), let methods = row.text(8), let family = row.text(9)
        else { throw StoreError.corrupt("authorization code row") }
        return AuthorizationCodeRecord(
            codeHash: hash, clientID: client, uid: uid, redirectURI: redirect, scopes: Self.tokens(scopes), nonce: row.text(5),
            codeChallenge: row.text(6), authTime: row.integer(7), methods: Self.tokens(methods), refreshFamily: family,
            createdAt: row.integer(10), expiresAt: row.integer(11), consumedAt: row.optionalInteger(12))
    }

    /// A space-separated list as stored (scope and method tokens hold no spaces), empty for "".
    private static func tokens(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    public func authorizationCode(hash: [UInt8]) throws -> AuthorizationCodeRecord? {
        try db.first("SELECT \(Self.codeColumns) FROM oidc_codes WHERE code_hash = ?", [.blob(hash)], readCode)
    }

    public func insertAuthorizationCode(_ c: AuthorizationCodeRecord) throws {
        try db.execute(
            "INSERT INTO oidc_codes (\(Self.codeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .blob(c.codeHash), .text(c.clientID), .text(c.uid), .text(c.redirectURI), .text(c.scopes.joined(separator: " ")),
                c.nonce.map(SQLValue.text) ?? .null, c.codeChallenge.map(SQLValue.text) ?? .null, .integer(c.authTime),
                .text(c.methods.joined(separator: " ")), .text(c.refreshFamily), .integer(c.createdAt), .integer(c.expiresAt),
                c.consumedAt.map(SQLValue.integer) ?? .null,
            ])
    }

    public func consumeAuthorizationCode(hash: [UInt8], at now: Int64) throws -> AuthorizationCodeConsumption? {
        // One statement decides: SQLite writes one at a time; PostgreSQL re-checks
        // `consumed_at IS NULL` on the row a concurrent redemption left (or fails the serializable
        // transaction, whose retry then finds it consumed).
        let won = try db.execute(
            "UPDATE oidc_codes SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL", [.integer(now), .blob(hash)])
        guard let record = try authorizationCode(hash: hash) else { return nil }
        return won == 1 ? .consumed(record) : .replayed(record)
    }

    public func pruneAuthorizationCodes(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "oidc_codes", key: "code_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}
