import PosternCore

extension InMemoryStore.Transaction {
    public func authorizationCode(hash: [UInt8]) throws -> AuthorizationCodeRecord? { state.authorizationCodes[hash] }

    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws {
        guard state.authorizationCodes[code.codeHash] == nil else { throw StoreError.duplicate("oidc_codes_pkey") }
        // The account's foreign key: a code of no account is refused.
        guard state.accounts[code.uid] != nil else { throw StoreError.notFound("account") }
        state.authorizationCodes[code.codeHash] = code
    }

    public func consumeAuthorizationCode(hash: [UInt8], at now: Int64) throws -> AuthorizationCodeConsumption? {
        guard var code = state.authorizationCodes[hash] else { return nil }
        guard code.consumedAt == nil else { return .replayed(code) }
        code.consumedAt = now
        state.authorizationCodes[hash] = code
        return .consumed(code)
    }

    public func pruneAuthorizationCodes(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.authorizationCodes, limit: limit) { $0.expiresAt <= horizon }
    }
}

extension InMemoryStore.Transaction {
    public func oidcClient(id clientID: String) throws -> OIDCClient? { state.oidcClients[clientID] }

    public func oidcClients() throws -> [OIDCClient] {
        state.oidcClients.values.sorted { ($0.createdAt, $0.clientID) < ($1.createdAt, $1.clientID) }
    }

    public func insertOIDCClient(_ client: OIDCClient) throws {
        guard state.oidcClients[client.clientID] == nil else { throw StoreError.duplicate("oidc_clients_pkey") }
        state.oidcClients[client.clientID] = client
    }

    public func updateOIDCClient(_ client: OIDCClient) throws {
        guard state.oidcClients[client.clientID] != nil else { throw StoreError.notFound("oidc client") }
        state.oidcClients[client.clientID] = client
    }

    public func deleteOIDCClient(id clientID: String) throws -> Bool {
        guard state.oidcClients.removeValue(forKey: clientID) != nil else { return false }
        for uid in state.oidcConsents.keys { state.oidcConsents[uid]?[clientID] = nil }
        state.authorizationCodes = state.authorizationCodes.filter { $0.value.clientID != clientID }
        for (hash, token) in state.refreshTokens where token.clientID == clientID { state.refreshTokens[hash]?.revoked = true }
        return true
    }

    public func oidcPendingRequest(id: String) throws -> OIDCPendingRequest? { state.oidcRequests[id] }

    public func insertOIDCPendingRequest(_ request: OIDCPendingRequest) throws {
        guard state.oidcRequests[request.id] == nil else { throw StoreError.duplicate("oidc_requests_pkey") }
        state.oidcRequests[request.id] = request
    }

    public func deleteOIDCPendingRequest(id: String) throws -> Bool { state.oidcRequests.removeValue(forKey: id) != nil }

    public func pruneOIDCPendingRequests(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.oidcRequests, limit: limit) { $0.expiresAt <= horizon }
    }

    public func oidcBrowserSession(hash: [UInt8]) throws -> OIDCBrowserSession? { state.oidcBrowserSessions[hash] }

    public func insertOIDCBrowserSession(_ session: OIDCBrowserSession) throws {
        guard state.oidcBrowserSessions[session.hash] == nil else { throw StoreError.duplicate("oidc_browser_sessions_pkey") }
        guard state.accounts[session.uid] != nil else { throw StoreError.notFound("account") }
        state.oidcBrowserSessions[session.hash] = session
    }

    public func deleteOIDCBrowserSession(hash: [UInt8]) throws -> Bool { state.oidcBrowserSessions.removeValue(forKey: hash) != nil }

    public func deleteOIDCBrowserSessions(uid: String) throws -> Int {
        let doomed = state.oidcBrowserSessions.filter { $0.value.uid == uid }.keys
        for hash in doomed { state.oidcBrowserSessions[hash] = nil }
        return doomed.count
    }

    public func pruneOIDCBrowserSessions(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.oidcBrowserSessions, limit: limit) { $0.expiresAt <= horizon }
    }

    public func oidcConsent(uid: String, clientID: String) throws -> OIDCConsent? { state.oidcConsents[uid]?[clientID] }

    public func oidcConsents(uid: String) throws -> [OIDCConsent] {
        (state.oidcConsents[uid] ?? [:]).values.sorted { $0.clientID < $1.clientID }
    }

    public func upsertOIDCConsent(_ consent: OIDCConsent) throws {
        guard state.accounts[consent.uid] != nil else { throw StoreError.notFound("account") }
        guard state.oidcClients[consent.clientID] != nil else { throw StoreError.notFound("oidc client") }
        state.oidcConsents[consent.uid, default: [:]][consent.clientID] = consent
    }

    public func deleteOIDCConsent(uid: String, clientID: String) throws -> Bool {
        state.oidcConsents[uid]?.removeValue(forKey: clientID) != nil
    }
}
