import PosternCore

/// Identity providers' subjects linked to accounts and the replay ledger of their ID tokens
/// (``ProviderIdentityWriter``).
extension InMemoryStore.Transaction {
    /// The key of `State.providerIdentities`.
    static func identityKey(provider: String, subject: String) -> String { "\(provider)\u{0}\(subject)" }

    public func providerIdentity(provider: String, subject: String) throws -> ProviderIdentityLink? {
        state.providerIdentities[Self.identityKey(provider: provider, subject: subject)]
    }

    public func providerIdentities(uid: String) throws -> [ProviderIdentityLink] {
        state.providerIdentities.values.filter { $0.uid == uid }.sorted { ($0.createdAt, $0.provider) < ($1.createdAt, $1.provider) }
    }

    public func insertProviderIdentity(_ identity: ProviderIdentityLink) throws -> Bool {
        // The account's foreign key first, as the SQL stores tell a missing account from a taken key.
        guard state.accounts[identity.uid] != nil else { throw StoreError.notFound("account") }
        let key = Self.identityKey(provider: identity.provider, subject: identity.subject)
        guard state.providerIdentities[key] == nil,
            !state.providerIdentities.values.contains(where: { $0.uid == identity.uid && $0.provider == identity.provider })
        else { return false }
        state.providerIdentities[key] = identity
        return true
    }

    public func touchProviderIdentity(provider: String, subject: String, email: EmailAddress?, emailVerified: Bool, at: Int64) throws {
        let key = Self.identityKey(provider: provider, subject: subject)
        guard var identity = state.providerIdentities[key] else { return }
        identity.email = email
        identity.emailVerified = emailVerified
        identity.lastUsedAt = at
        state.providerIdentities[key] = identity
    }

    public func deleteProviderIdentity(uid: String, provider: String) throws -> Bool {
        guard let key = state.providerIdentities.first(where: { $0.value.uid == uid && $0.value.provider == provider })?.key else {
            return false
        }
        state.providerIdentities[key] = nil
        return true
    }

    public func deleteProviderIdentity(provider: String, subject: String) throws -> String? {
        state.providerIdentities.removeValue(forKey: Self.identityKey(provider: provider, subject: subject))?.uid
    }

    public func useProviderToken(hash tokenHash: [UInt8], expiresAt: Int64) throws -> Bool {
        guard state.providerTokenUses[tokenHash] == nil else { return false }
        state.providerTokenUses[tokenHash] = expiresAt
        return true
    }

    public func pruneProviderTokenUses(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.providerTokenUses, limit: limit) { $0 <= horizon }
    }
}
