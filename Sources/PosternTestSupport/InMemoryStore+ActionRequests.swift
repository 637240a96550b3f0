import PosternCore

/// Action requests and the single-use ledger (``ActionRequestWriter``).
extension InMemoryStore.Transaction {
    public func actionRequest(id: String) throws -> ActionRequest? {
        looked()
        return state.requests[id]
    }

    public func actionRequests(ids: [String]) throws -> [String: ActionRequest] {
        looked()
        return Dictionary(ids.compactMap { id in state.requests[id].map { (id, $0) } }, uniquingKeysWith: { first, _ in first })
    }

    public func openActionRequests(purpose: ActionRequest.Purpose, address: EmailAddress, now: Int64) throws -> [ActionRequest] {
        state.requests.values
            .filter { $0.purpose == purpose && $0.email == address && $0.consumedAt == nil && $0.expiresAt > now }
            .sorted { $0.createdAt > $1.createdAt }
    }

    public func insertActionRequest(_ request: ActionRequest) throws {
        guard state.requests[request.id] == nil else { throw StoreError.duplicate("action_requests_pkey") }
        state.requests[request.id] = request
    }

    public func updateActionRequest(_ request: ActionRequest) throws {
        guard state.requests[request.id] != nil else { throw StoreError.notFound("action request") }
        state.requests[request.id] = request
    }

    public func pruneActionRequests(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.requests, limit: limit) { $0.expiresAt <= horizon }
    }

    public func isConsumed(nonce: [UInt8]) throws -> Bool {
        looked()
        return state.consumed[nonce] != nil
    }

    public func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool {
        guard state.consumed[nonce] == nil else { return false }
        state.consumed[nonce] = expiresAt
        return true
    }

    public func pruneConsumedCodes(now: Int64, limit: Int) throws -> Int {
        Self.prune(&state.consumed, limit: limit) { $0 <= now }
    }
}
