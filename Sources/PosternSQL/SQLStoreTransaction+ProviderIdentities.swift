import PosternCore

/// Identity providers' subjects linked to accounts and the replay ledger of their ID tokens
/// (``ProviderIdentityWriter``).
extension SQLStoreTransaction {
    private static let identityColumns =
        "provider, subject, uid, email_local_part, email_domain, email_verified, created_at, last_used_at"

    private func readIdentity(_ row: any SQLRow) throws -> ProviderIdentityLink {
        guard let provider = row.text(0), let subject = row.text(1), let uid = row.text(2) else {
            throw StoreError.corrupt("provider identity row")
        }
        let email = row.text(3).flatMap { local in row.text(4).map { EmailAddress.restored(localPart: local, domain: $0) } }
        return ProviderIdentityLink(
            provider: provider, subject: subject, uid: uid, email: email, emailVerified: row.integer(5) != 0,
            createdAt: row.integer(6), lastUsedAt: row.integer(7))
    }

    /// The address columns' values: the local part as given and the domain, as `addresses` keeps them.
    private func addressValues(_ email: EmailAddress?) -> [SQLValue] {
        [email.map { .text($0.localPart) } ?? .null, email.map { .text($0.domain) } ?? .null]
    }

    public func providerIdentity(provider: String, subject: String) throws -> ProviderIdentityLink? {
        try db.first(
            "SELECT \(Self.identityColumns) FROM provider_identities WHERE provider = ? AND subject = ?",
            [.text(provider), .text(subject)], readIdentity)
    }

    public func providerIdentities(uid: String) throws -> [ProviderIdentityLink] {
        var identities: [ProviderIdentityLink] = []
        try db.query(
            "SELECT \(Self.identityColumns) FROM provider_identities WHERE uid = ? ORDER BY created_at, provider",
            [.text(uid)]
        ) { identities.append(try readIdentity($0)) }
        return identities
    }

    public func insertProviderIdentity(_ identity: ProviderIdentityLink) throws -> Bool {
        // From the account's row, DO NOTHING on either unique key: neither a missing account nor a
        // taken key fails the statement (PostgreSQL would abort the whole transaction), and which
        // of them it was is told after.
        let inserted = try db.execute(
            """
            INSERT INTO provider_identities (provider, subject, uid, email_local_part, email_domain, email_verified, created_at, last_used_at)
            SELECT ?, ?, uid, ?, ?, ?, ?, ? FROM accounts WHERE uid = ? ON CONFLICT DO NOTHING
            """,
            [.text(identity.provider), .text(identity.subject)] + addressValues(identity.email) + [
                .integer(identity.emailVerified ? 1 : 0), .integer(identity.createdAt), .integer(identity.lastUsedAt),
                .text(identity.uid),
            ])
        if inserted == 1 { return true }
        guard try db.first("SELECT 1 FROM accounts WHERE uid = ?", [.text(identity.uid)], { _ in true }) != nil else {
            throw StoreError.notFound("account")
        }
        return false
    }

    public func touchProviderIdentity(provider: String, subject: String, email: EmailAddress?, emailVerified: Bool, at: Int64) throws {
        try db.execute(
            "UPDATE provider_identities SET email_local_part = ?, email_domain = ?, email_verified = ?, last_used_at = ? WHERE provider = ? AND subject = ?",
            addressValues(email) + [.integer(emailVerified ? 1 : 0), .integer(at), .text(provider), .text(subject)])
    }

    public func deleteProviderIdentity(uid: String, provider: String) throws -> Bool {
        try db.execute("DELETE FROM provider_identities WHERE uid = ? AND provider = ?", [.text(uid), .text(provider)]) == 1
    }

    public func deleteProviderIdentity(provider: String, subject: String) throws -> String? {
        try db.first(
            "DELETE FROM provider_identities WHERE provider = ? AND subject = ? RETURNING uid", [.text(provider), .text(subject)], { $0.text(0) }
        ) ?? nil
    }

    // MARK: the replay ledger of providers' ID tokens

    public func useProviderToken(hash tokenHash: [UInt8], expiresAt: Int64) throws -> Bool {
        try db.execute(
            "INSERT INTO provider_token_uses (token_hash, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [.blob(tokenHash), .integer(expiresAt)]) == 1
    }

    public func pruneProviderTokenUses(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "provider_token_uses", key: "token_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}
