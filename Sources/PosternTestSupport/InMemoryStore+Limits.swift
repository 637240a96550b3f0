import PosternCore

/// Rate limits, fixed windows, the per-client limit and guess budgets (``LimitWriter``).
extension InMemoryStore.Transaction {
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

    public func countInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws -> Int64? {
        let window = max(1, window)
        let start = FixedWindow.start(of: now, window: window)
        let current = state.rateWindows[bucket].flatMap { $0.start == start ? $0.count : nil } ?? 0
        if current >= limit { return max(1, start + window - now) }
        state.rateWindows[bucket] = (start, current + 1)
        return nil
    }

    public func takeInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64, upTo count: Int64) throws -> Int64 {
        let start = FixedWindow.start(of: now, window: window)
        let current = state.rateWindows[bucket].flatMap { $0.start == start ? $0.count : nil } ?? 0
        let taken = min(max(0, count), max(0, limit - current))
        if taken > 0 { state.rateWindows[bucket] = (start, current + taken) }
        return taken
    }

    public func returnInWindow(bucket: [UInt8], windowStart: Int64, count: Int64) throws {
        guard let row = state.rateWindows[bucket], row.start == windowStart else { return }
        state.rateWindows[bucket] = (windowStart, max(0, row.count - count))
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

    public func takeClientTokens(bucket: [UInt8], now: Int64, allowed: Int64, window: Int64, upTo count: Int64) throws -> ClientTokenGrant {
        let grant = ClientRatePolicy.take(tat: state.clientRate[bucket], now: now, allowed: allowed, window: window, upTo: count)
        if grant.granted > 0 { state.clientRate[bucket] = grant.tat }
        return grant
    }

    public func returnClientTokens(bucket: [UInt8], count: Int64, allowed: Int64, window: Int64) throws {
        guard let tat = state.clientRate[bucket] else { return }
        state.clientRate[bucket] = tat - count * ClientRatePolicy.step(allowed: allowed, window: window)
    }

    public func clientTokenTAT(bucket: [UInt8]) throws -> Int64? { state.clientRate[bucket] }

    public func pruneClientBuckets(fullBy now: Int64, limit: Int) throws -> Int {
        let full = state.clientRate.filter { $0.value <= now }.keys.prefix(max(0, limit))
        for bucket in full { state.clientRate[bucket] = nil }
        return full.count
    }

    public func guessRecord(bucket: [UInt8]) throws -> GuessRecord? { state.guesses[bucket] }

    public func setGuessRecord(bucket: [UInt8], _ record: GuessRecord?) throws { state.guesses[bucket] = record }
}
