import PosternCore
import PosternCrypto

extension SQLStoreTransaction {
    // MARK: action requests

    private static let requestColumns =
        "id, purpose, email, uid, other_email, password_hash, continue_url, locale, code_challenge, created_at, expires_at, six_digit_key_id, wrong_tries, consumed_at, approval_number, approval_device, approved_at, browser_bound"

    private func readRequest(_ row: any SQLRow) throws -> ActionRequest {
        guard let id = row.text(0), let purpose = row.text(1).flatMap(ActionRequest.Purpose.init(rawValue:)),
            let email = try row.text(2).map({ try EmailAddress.parse($0) })
        else { throw StoreError.corrupt("action request row") }
        return ActionRequest(
            id: id, purpose: purpose, email: email, uid: row.text(3),
            otherEmail: try row.text(4).map { try EmailAddress.parse($0) }, passwordHash: row.text(5),
            continueURL: row.text(6), locale: row.text(7), codeChallenge: row.text(8), createdAt: row.integer(9),
            expiresAt: row.integer(10), sixDigitKeyID: row.optionalInteger(11).map { UInt32(truncatingIfNeeded: $0) },
            wrongTries: Int(row.integer(12)), consumedAt: row.optionalInteger(13), approval: try readApproval(row, from: 14),
            browserBound: row.integer(17) != 0)
    }

    /// The approval columns (number, device, approved_at), nil when unset. (`approval_choices`,
    /// the three numbers the page once offered to pick from, is no longer written or read: the
    /// owner types the number now.)
    private func readApproval(_ row: any SQLRow, from first: Int32) throws -> ActionRequest.Approval? {
        guard let number = row.optionalInteger(first) else { return nil }
        guard let device = row.text(first + 1) else { throw StoreError.corrupt("action request approval") }
        return ActionRequest.Approval(number: Int(number), device: device, approvedAt: row.optionalInteger(first + 2))
    }

    public func actionRequest(id: String) throws -> ActionRequest? {
        try db.first("SELECT \(Self.requestColumns) FROM action_requests WHERE id = ?", [.text(id)], readRequest)
    }

    public func openActionRequests(purpose: ActionRequest.Purpose, address: EmailAddress, now: Int64) throws -> [ActionRequest] {
        var out: [ActionRequest] = []
        try db.query(
            "SELECT \(Self.requestColumns) FROM action_requests WHERE normalized = ? AND purpose = ? AND consumed_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 20",
            [.text(address.normalized), .text(purpose.rawValue), .integer(now)]
        ) { out.append(try readRequest($0)) }
        return out
    }

    private func requestValues(_ r: ActionRequest) -> [SQLValue] {
        [
            .text(r.purpose.rawValue), .text(r.email.address), .text(r.email.normalized), r.uid.map(SQLValue.text) ?? .null,
            r.otherEmail.map { .text($0.address) } ?? .null, r.passwordHash.map(SQLValue.text) ?? .null,
            r.continueURL.map(SQLValue.text) ?? .null, r.locale.map(SQLValue.text) ?? .null,
            r.codeChallenge.map(SQLValue.text) ?? .null, .integer(r.createdAt), .integer(r.expiresAt),
            r.sixDigitKeyID.map { .integer(Int64($0)) } ?? .null,
            .integer(Int64(r.wrongTries)), r.consumedAt.map(SQLValue.integer) ?? .null,
            r.approval.map { .integer(Int64($0.number)) } ?? .null,
            r.approval.map { .text($0.device) } ?? .null, r.approval?.approvedAt.map(SQLValue.integer) ?? .null,
            .integer(r.browserBound ? 1 : 0), .text(r.id),
        ]
    }

    public func insertActionRequest(_ request: ActionRequest) throws {
        try db.execute(
            "INSERT INTO action_requests (purpose, email, normalized, uid, other_email, password_hash, continue_url, locale, code_challenge, created_at, expires_at, six_digit_key_id, wrong_tries, consumed_at, approval_number, approval_device, approved_at, browser_bound, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            requestValues(request))
    }

    public func updateActionRequest(_ request: ActionRequest) throws {
        let changed = try db.execute(
            "UPDATE action_requests SET purpose = ?, email = ?, normalized = ?, uid = ?, other_email = ?, password_hash = ?, continue_url = ?, locale = ?, code_challenge = ?, created_at = ?, expires_at = ?, six_digit_key_id = ?, wrong_tries = ?, consumed_at = ?, approval_number = ?, approval_device = ?, approved_at = ?, browser_bound = ? WHERE id = ?",
            requestValues(request))
        guard changed == 1 else { throw StoreError.notFound("action request") }
    }

    public func pruneActionRequests(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "action_requests", key: "id", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }

    // MARK: refresh tokens

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try db.first(
            "SELECT family, uid, auth_time, method, created_at, expires_at, rotated_at, revoked, client_id FROM refresh_tokens WHERE token_hash = ?",
            [.blob(hash)]
        ) { row in
            RefreshTokenRecord(
                hash: hash, family: row.text(0) ?? "", uid: row.text(1) ?? "", authTime: row.integer(2),
                method: row.text(3) ?? "", createdAt: row.integer(4), expiresAt: row.integer(5),
                rotatedAt: row.optionalInteger(6), revoked: row.integer(7) != 0, clientID: row.text(8))
        }
    }

    public func insertRefreshToken(_ t: RefreshTokenRecord) throws {
        try db.execute(
            "INSERT INTO refresh_tokens (token_hash, family, uid, auth_time, method, created_at, expires_at, rotated_at, revoked, client_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .blob(t.hash), .text(t.family), .text(t.uid), .integer(t.authTime), .text(t.method), .integer(t.createdAt),
                .integer(t.expiresAt), t.rotatedAt.map(SQLValue.integer) ?? .null, .integer(t.revoked ? 1 : 0),
                t.clientID.map(SQLValue.text) ?? .null,
            ])
    }

    public func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws {
        try db.execute("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?", [.integer(at), .blob(hash)])
    }

    public func revokeRefreshFamily(_ family: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE family = ? AND revoked = 0", [.text(family)])
    }

    public func revokeRefreshTokens(uid: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND revoked = 0", [.text(uid)])
    }

    public func revokeRefreshTokens(uid: String, method: String) throws -> Int {
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE uid = ? AND method = ? AND revoked = 0", [.text(uid), .text(method)])
    }

    public func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "refresh_tokens", key: "token_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }

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
