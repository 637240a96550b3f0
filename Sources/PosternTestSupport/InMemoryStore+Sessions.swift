import PosternCore

/// Refresh tokens (``SessionWriter``).
extension InMemoryStore.Transaction {
    public func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.refreshTokens, limit: limit) { $0.expiresAt <= horizon }
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? { state.refreshTokens[hash] }

    public func insertRefreshToken(_ token: RefreshTokenRecord) throws {
        guard state.refreshTokens[token.hash] == nil else { throw StoreError.duplicate("refresh_tokens_pkey") }
        // The account's foreign key: a token of no account is refused.
        guard state.accounts[token.uid] != nil else { throw StoreError.notFound("account") }
        state.refreshTokens[token.hash] = token
    }

    public func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws { state.refreshTokens[hash]?.rotatedAt = at }

    public func isRefreshFamilyRevoked(_ family: String) throws -> Bool {
        state.refreshTokens.values.contains { $0.family == family && $0.revoked }
    }

    public func revokeRefreshFamily(_ family: String) throws -> Int {
        var count = 0
        for (key, token) in state.refreshTokens where token.family == family && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }

    public func revokeRefreshTokens(uid: String) throws -> Int {
        var count = 0
        for (key, token) in state.refreshTokens where token.uid == uid && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }

    public func revokeRefreshTokens(uid: String, method: String) throws -> Int {
        var count = 0
        for (key, token) in state.refreshTokens where token.uid == uid && token.method == method && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }
}
