import PosternCore

/// Accounts (``AccountWriter``).
extension InMemoryStore.Transaction {
    public func account(uid: String) throws -> Account? {
        looked()
        return state.accounts[uid]
    }

    public func accounts(after uid: String?, limit: Int) throws -> [Account] {
        Array(state.accounts.values.filter { $0.uid > (uid ?? "") }.sorted { $0.uid < $1.uid }.prefix(limit))
    }

    public func accounts(newestFirstAfter cursor: UserCursor?, matching query: UserQuery?, limit: Int) throws -> [Account] {
        let rows = state.accounts.values
            .filter { cursor?.precedes(createdAt: $0.createdAt, uid: $0.uid) ?? true }
            .filter { query?.matches(uid: $0.uid, normalized: $0.email?.normalized) ?? true }
            .sorted { ($0.createdAt, $0.uid) > ($1.createdAt, $1.uid) }
        return Array(rows.prefix(max(0, limit)))
    }

    public func account(address: EmailAddress) throws -> Account? {
        looked()
        return state.accounts.values.first { $0.email == address }
    }

    public func accounts(addresses: [EmailAddress]) throws -> [String: Account] {
        looked()
        let wanted = Set(addresses.map(\.normalized))
        return Dictionary(state.accounts.values.compactMap { account in
            account.email.flatMap { wanted.contains($0.normalized) ? ($0.normalized, account) : nil }
        }, uniquingKeysWith: { first, _ in first })
    }

    public func passwordHashSample(prefix: String) throws -> String? {
        state.accounts.values.lazy.compactMap(\.passwordHash).first { $0.hasPrefix(prefix) }
    }

    public func insertAccount(_ account: Account) throws {
        guard state.accounts[account.uid] == nil else { throw StoreError.duplicate("accounts_pkey") }
        if let email = account.email, try self.account(address: email) != nil { throw StoreError.addressTaken }
        state.accounts[account.uid] = account
    }

    public func updateAccount(_ account: Account) throws {
        guard state.accounts[account.uid] != nil else { throw StoreError.notFound("account") }
        if let email = account.email, let holder = try self.account(address: email), holder.uid != account.uid {
            throw StoreError.addressTaken
        }
        state.accounts[account.uid] = account
    }

    public func deleteAccount(uid: String) throws {
        state.accounts[uid] = nil
        state.refreshTokens = state.refreshTokens.filter { $0.value.uid != uid }
        state.phoneClaims = state.phoneClaims.filter { $0.value.uid != uid }
        state.phoneNumbers = state.phoneNumbers.filter { $0.value.uid != uid }
        state.authorizationCodes = state.authorizationCodes.filter { $0.value.uid != uid }
        state.oidcBrowserSessions = state.oidcBrowserSessions.filter { $0.value.uid != uid }
        state.oidcConsents[uid] = nil
        state.providerIdentities = state.providerIdentities.filter { $0.value.uid != uid }
        state.deviceSessions = state.deviceSessions.filter { $0.value.uid != uid }
        state.activity.removeAll { $0.uid == uid }
    }
}
