import PosternCore
import PosternCrypto

/// Rate limits, fixed windows, the per-client limit and guess budgets (``LimitWriter``).
extension SQLStoreTransaction {
    // MARK: rate limits

    public func pruneRateEvents(atOrBefore horizon: Int64, limit: Int) throws -> Int {
        // The table has no key of its own: the row's physical address is one. Unindexed by time
        // (an index would cost every request's insert), so the choice scans; a bucket drops its own
        // old events as it counts, and the table holds little more than the last hour.
        let key = db.dialect == .sqlite ? "rowid" : "ctid"
        return try pruneBatch(table: "rate_events", key: key, condition: "at <= ?", [.integer(horizon)], limit: limit)
    }

    public func pruneRateWindows(startedBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "rate_windows", key: "bucket", condition: "window_start <= ?", [.integer(horizon)], limit: limit)
    }

    public func countInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws -> Int64? {
        let window = max(1, window)
        let start = now - ((now % window) + window) % window
        let counted = try db.first("SELECT window_start, count FROM rate_windows WHERE bucket = ?", [.blob(bucket)]) {
            ($0.integer(0), $0.integer(1))
        }
        let current = counted.flatMap { $0.0 == start ? $0.1 : nil } ?? 0
        if current >= limit { return max(1, start + window - now) }
        try db.execute(
            """
            INSERT INTO rate_windows (bucket, window_start, count) VALUES (?, ?, ?)
            ON CONFLICT (bucket) DO UPDATE SET window_start = excluded.window_start, count = excluded.count
            """,
            [.blob(bucket), .integer(start), .integer(current + 1)])
        return nil
    }

    public func rateLimit(bucket: [UInt8], now: Int64, interval: Int64, perHour: Int64) throws -> Int64? {
        try db.execute("DELETE FROM rate_events WHERE bucket = ? AND at <= ?", [.blob(bucket), .integer(now - RateLimitPolicy.window)])
        var times: [Int64] = []
        try db.query("SELECT at FROM rate_events WHERE bucket = ? ORDER BY at", [.blob(bucket)]) { times.append($0.integer(0)) }
        if let retry = RateLimitPolicy.retryAfter(eventTimes: times, now: now, interval: interval, perHour: perHour) {
            return retry
        }
        try db.execute("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", [.blob(bucket), .integer(now)])
        return nil
    }

    // MARK: the per-client limit

    /// One upsert (``ClientRatePolicy``): a new row is allowed; an existing one moves its `tat`
    /// and says `allowed` 1 when the request fits, else keeps its `tat` and says 0. Every `SET`
    /// expression reads the row as it was (both databases), and the upsert locks the row, so
    /// daemons checking one client at once are counted one after the other.
    public func takeClientToken(bucket: [UInt8], nowMillis now: Int64, allowed: Int64, windowMillis window: Int64) throws -> Int64? {
        let step = ClientRatePolicy.step(allowed: allowed, window: window)
        let start = "(CASE WHEN client_rate.tat > CAST(? AS BIGINT) THEN client_rate.tat ELSE CAST(? AS BIGINT) END)"
        let fits = "\(start) + CAST(? AS BIGINT) <= CAST(? AS BIGINT)"
        let fitsArgs: [SQLValue] = [.integer(now), .integer(now), .integer(step), .integer(now + window)]
        let answer = try db.rowLocked {
            try db.first(
                """
                INSERT INTO client_rate (bucket, tat, allowed) VALUES (?, ?, 1)
                ON CONFLICT (bucket) DO UPDATE SET
                    allowed = CASE WHEN \(fits) THEN 1 ELSE 0 END,
                    tat = CASE WHEN \(fits) THEN \(start) + CAST(? AS BIGINT) ELSE client_rate.tat END
                RETURNING allowed, tat
                """,
                [.blob(bucket), .integer(now + step)] + fitsArgs + fitsArgs + [.integer(now), .integer(now), .integer(step)]
            ) { (allowed: $0.integer(0) != 0, tat: $0.integer(1)) }
        }
        guard let answer else { throw StoreError.corrupt("the client limit's upsert returned no row") }
        return answer.allowed ? nil : ClientRatePolicy.retryAfter(tat: answer.tat, now: now, allowed: allowed, window: window)
    }

    public func clientTokenTAT(bucket: [UInt8]) throws -> Int64? {
        try db.first("SELECT tat FROM client_rate WHERE bucket = ?", [.blob(bucket)]) { $0.integer(0) }
    }

    public func pruneClientBuckets(fullBy nowMillis: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "client_rate", key: "bucket", condition: "tat <= ?", [.integer(nowMillis)], limit: limit)
    }

    // MARK: guess budgets

    public func guessRecord(bucket: [UInt8]) throws -> GuessRecord? {
        try db.first("SELECT failures, last_failure_at FROM guess_budgets WHERE bucket = ?", [.blob(bucket)]) {
            GuessRecord(failures: $0.integer(0), lastFailureAt: $0.integer(1))
        }
    }

    public func setGuessRecord(bucket: [UInt8], _ record: GuessRecord?) throws {
        if let record {
            try db.execute(
                "INSERT INTO guess_budgets (bucket, failures, last_failure_at) VALUES (?, ?, ?) ON CONFLICT (bucket) DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at",
                [.blob(bucket), .integer(record.failures), .integer(record.lastFailureAt)])
        } else {
            try db.execute("DELETE FROM guess_budgets WHERE bucket = ?", [.blob(bucket)])
        }
    }

    public func pruneGuessRecords(lastFailureBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "guess_budgets", key: "bucket", condition: "last_failure_at <= ?", [.integer(horizon)], limit: limit)
    }
}
