import PosternCore

extension InMemoryStore.Transaction {
    public func actionRequest(id: String) throws -> ActionRequest? {
        looked()
        return state.requests[id]
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

    public func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.refreshTokens, limit: limit) { $0.expiresAt <= horizon }
    }

    public func pruneGuessRecords(lastFailureBy horizon: Int64, limit: Int) throws -> Int {
        Self.prune(&state.guesses, limit: limit) { $0.lastFailureAt <= horizon }
    }

    public func pruneRateEvents(atOrBefore horizon: Int64, limit: Int) throws -> Int {
        var left = max(0, limit)
        for (bucket, times) in state.rateEvents where left > 0 {
            let doomed = times.enumerated().filter { $0.element <= horizon }.prefix(left).map(\.offset)
            guard !doomed.isEmpty else { continue }
            let kept = times.enumerated().filter { !doomed.contains($0.offset) }.map(\.element)
            state.rateEvents[bucket] = kept.isEmpty ? nil : kept
            left -= doomed.count
        }
        return max(0, limit) - left
    }

    public func pruneRateWindows(startedBy horizon: Int64, limit: Int) throws -> Int {
        let doomed = state.rateWindows.filter { $0.value.start <= horizon }.keys.prefix(max(0, limit))
        for bucket in doomed { state.rateWindows[bucket] = nil }
        return doomed.count
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? { state.refreshTokens[hash] }
    public func insertRefreshToken(_ token: RefreshTokenRecord) throws {
        guard state.refreshTokens[token.hash] == nil else { throw StoreError.duplicate("refresh_tokens_pkey") }
        // The account's foreign key: a token of no account is refused.
        guard state.accounts[token.uid] != nil else { throw StoreError.notFound("account") }
        state.refreshTokens[token.hash] = token
    }
    public func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws { state.refreshTokens[hash]?.rotatedAt = at }

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

    public func countInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws -> Int64? {
        let window = max(1, window)
        let start = now - ((now % window) + window) % window
        let current = state.rateWindows[bucket].flatMap { $0.start == start ? $0.count : nil } ?? 0
        if current >= limit { return max(1, start + window - now) }
        state.rateWindows[bucket] = (start, current + 1)
        return nil
    }

    public func rateLimit(bucket: [UInt8], now: Int64, interval: Int64, perHour: Int64) throws -> Int64? {
        // The bucket forgets its events older than the window whether or not this one is allowed.
        let times = (state.rateEvents[bucket] ?? []).filter { $0 > now - RateLimitPolicy.window }
        state.rateEvents[bucket] = times.isEmpty ? nil : times
        if let retry = RateLimitPolicy.retryAfter(eventTimes: times, now: now, interval: interval, perHour: perHour) {
            return retry
        }
        state.rateEvents[bucket] = times + [now]
        return nil
    }

    public func takeClientToken(bucket: [UInt8], nowMillis: Int64, allowed: Int64, windowMillis: Int64) throws -> Int64? {
        let decision = ClientRatePolicy.decide(tat: state.clientRate[bucket], now: nowMillis, allowed: allowed, window: windowMillis)
        if let tat = decision.tat { state.clientRate[bucket] = tat }
        return decision.retryAfter
    }

    public func clientTokenTAT(bucket: [UInt8]) throws -> Int64? { state.clientRate[bucket] }

    public func pruneClientBuckets(fullBy nowMillis: Int64, limit: Int) throws -> Int {
        let full = state.clientRate.filter { $0.value <= nowMillis }.keys.prefix(max(0, limit))
        for bucket in full { state.clientRate[bucket] = nil }
        return full.count
    }
}
