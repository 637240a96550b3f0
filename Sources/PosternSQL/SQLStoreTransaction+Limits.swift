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
        let start = FixedWindow.start(of: now, window: window)
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

    /// The row read `FOR UPDATE` (made first when missing), then moved by a write that rides with
    /// the commit: two round trips on PostgreSQL, in a READ COMMITTED transaction (``SQLSession/rowLocked(_:)``).
    public func takeInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64, upTo count: Int64) throws -> Int64 {
        let start = FixedWindow.start(of: now, window: window)
        let lock = db.dialect == .postgres ? " FOR UPDATE" : ""
        return try db.rowLocked {
            func read() throws -> (start: Int64, count: Int64)? {
                try db.first("SELECT window_start, count FROM rate_windows WHERE bucket = ?\(lock)", [.blob(bucket)]) {
                    ($0.integer(0), $0.integer(1))
                }
            }
            var row = try read()
            if row == nil {
                try db.execute(
                    "INSERT INTO rate_windows (bucket, window_start, count) VALUES (?, ?, 0) ON CONFLICT (bucket) DO NOTHING",
                    [.blob(bucket), .integer(start)])
                row = try read()
            }
            let current = row.flatMap { $0.start == start ? $0.count : nil } ?? 0
            let taken = min(max(0, count), max(0, limit - current))
            guard taken > 0 else { return 0 }
            try db.executeDeferred(
                "UPDATE rate_windows SET window_start = ?, count = ? WHERE bucket = ?",
                [.integer(start), .integer(current + taken), .blob(bucket)])
            return taken
        }
    }

    public func returnInWindow(bucket: [UInt8], windowStart: Int64, count: Int64) throws {
        guard count > 0 else { return }
        try db.rowLocked {
            try db.executeDeferred(
                "UPDATE rate_windows SET count = CASE WHEN count > CAST(? AS BIGINT) THEN count - CAST(? AS BIGINT) ELSE 0 END WHERE bucket = ? AND window_start = ?",
                [.integer(count), .integer(count), .blob(bucket), .integer(windowStart)])
        }
    }

    /// One round trip on PostgreSQL: the DELETE of the hour's expired events rides with the
    /// SELECT, and the INSERT with the transaction's next statement or its COMMIT (neither has an
    /// answer anyone waits for; each is still run before every later statement).
    public func rateLimit(bucket: [UInt8], now: Int64, interval: Int64, perHour: Int64) throws -> Int64? {
        try db.executeDeferred("DELETE FROM rate_events WHERE bucket = ? AND at <= ?", [.blob(bucket), .integer(now - RateLimitPolicy.window)])
        var times: [Int64] = []
        try db.query("SELECT at FROM rate_events WHERE bucket = ? ORDER BY at", [.blob(bucket)]) { times.append($0.integer(0)) }
        if let retry = RateLimitPolicy.retryAfter(eventTimes: times, now: now, interval: interval, perHour: perHour) {
            return retry
        }
        try db.executeDeferred("INSERT INTO rate_events (bucket, at) VALUES (?, ?)", [.blob(bucket), .integer(now)])
        return nil
    }

    // MARK: the per-client limit

    /// One upsert (``ClientRatePolicy/take(tat:now:allowed:window:upTo:)``): a new row takes as
    /// many as fit an empty bucket; an existing one takes as many as fit from `max(tat, now)`,
    /// moves its `tat` that many steps and says how many in `allowed` (0: none fit, `tat` kept).
    /// Every `SET` expression reads the row as it was (both databases), and the upsert locks the
    /// row, so daemons taking from one client at once are counted one after the other.
    public func takeClientTokens(bucket: [UInt8], now: Int64, allowed: Int64, window: Int64, upTo count: Int64) throws -> ClientTokenGrant {
        let step = ClientRatePolicy.step(allowed: allowed, window: window)
        let count = max(0, count)
        let fresh = ClientRatePolicy.take(tat: nil, now: now, allowed: allowed, window: window, upTo: count)
        let start = "(CASE WHEN client_rate.tat > CAST(? AS BIGINT) THEN client_rate.tat ELSE CAST(? AS BIGINT) END)"
        let startArgs: [SQLValue] = [.integer(now), .integer(now)]
        // The steps that fit before now + window (negative when another daemon's clock ran ahead).
        let room = "((CAST(? AS BIGINT) - \(start)) / CAST(? AS BIGINT))"
        let roomArgs: [SQLValue] = [.integer(now + window)] + startArgs + [.integer(step)]
        let granted = "(CASE WHEN \(room) >= CAST(? AS BIGINT) THEN CAST(? AS BIGINT) WHEN \(room) > 0 THEN \(room) ELSE 0 END)"
        let grantedArgs: [SQLValue] = roomArgs + [.integer(count), .integer(count)] + roomArgs + roomArgs
        let answer = try db.rowLocked {
            try db.first(
                """
                INSERT INTO client_rate (bucket, tat, allowed) VALUES (?, ?, ?)
                ON CONFLICT (bucket) DO UPDATE SET
                    allowed = \(granted),
                    tat = \(start) + \(granted) * CAST(? AS BIGINT)
                RETURNING allowed, tat
                """,
                [.blob(bucket), .integer(fresh.tat), .integer(fresh.granted)] + grantedArgs + startArgs + grantedArgs + [.integer(step)]
            ) { (granted: $0.integer(0), tat: $0.integer(1)) }
        }
        guard let answer else { throw StoreError.corrupt("the client limit's upsert returned no row") }
        return ClientTokenGrant(granted: answer.granted, tat: answer.tat)
    }

    public func returnClientTokens(bucket: [UInt8], count: Int64, allowed: Int64, window: Int64) throws {
        guard count > 0 else { return }
        // Row-locked: a transaction of takes and returns runs READ COMMITTED (never failing another's).
        try db.rowLocked {
            try db.executeDeferred(
                "UPDATE client_rate SET tat = tat - CAST(? AS BIGINT) WHERE bucket = ?",
                [.integer(count * ClientRatePolicy.step(allowed: allowed, window: window)), .blob(bucket)])
        }
    }

    public func clientTokenTAT(bucket: [UInt8]) throws -> Int64? {
        try db.first("SELECT tat FROM client_rate WHERE bucket = ?", [.blob(bucket)]) { $0.integer(0) }
    }

    public func pruneClientBuckets(fullBy now: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "client_rate", key: "bucket", condition: "tat <= ?", [.integer(now)], limit: limit)
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
