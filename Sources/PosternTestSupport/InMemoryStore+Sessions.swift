import PosternCore

/// Refresh tokens and the sessions their owners see (``SessionWriter``).
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
        state.deviceSessions = state.deviceSessions.filter { $0.value.family != family }
        var count = 0
        for (key, token) in state.refreshTokens where token.family == family && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }

    public func revokeRefreshTokens(uid: String) throws -> Int {
        state.deviceSessions = state.deviceSessions.filter { $0.value.uid != uid }
        var count = 0
        for (key, token) in state.refreshTokens where token.uid == uid && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }

    public func revokeRefreshTokens(uid: String, method: String) throws -> Int {
        state.deviceSessions = state.deviceSessions.filter { $0.value.uid != uid || $0.value.method != method }
        var count = 0
        for (key, token) in state.refreshTokens where token.uid == uid && token.method == method && !token.revoked {
            state.refreshTokens[key]?.revoked = true
            count += 1
        }
        return count
    }

    // MARK: sessions

    public func deviceSessions(uid: String, now: Int64) throws -> [DeviceSession] {
        state.deviceSessions.values.filter { $0.uid == uid && $0.expiresAt > now }
            .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    public func deviceSession(id: String) throws -> DeviceSession? { state.deviceSessions[id] }

    public func insertDeviceSession(_ session: DeviceSession) throws {
        guard state.deviceSessions[session.id] == nil, !state.deviceSessions.values.contains(where: { $0.family == session.family })
        else { throw StoreError.duplicate("sessions_pkey") }
        // The account's foreign key.
        guard state.accounts[session.uid] != nil else { throw StoreError.notFound("account") }
        state.deviceSessions[session.id] = session
    }

    public func touchDeviceSession(family: String, at: Int64, expiresAt: Int64) throws -> String? {
        guard let id = state.deviceSessions.first(where: { $0.value.family == family })?.key else { return nil }
        state.deviceSessions[id]?.lastUsedAt = at
        state.deviceSessions[id]?.expiresAt = expiresAt
        return id
    }

    public func pruneDeviceSessions(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.deviceSessions, limit: limit) { $0.expiresAt <= horizon }
    }
}
