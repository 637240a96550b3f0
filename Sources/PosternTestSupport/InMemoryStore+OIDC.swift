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
