import PosternCore

/// The operations every lease queue shares (``LeasedQueueWriter``): the mail outbox (`outbox`), the
/// webhook deliveries (`webhook_deliveries`) and the SMS outbox (`sms_outbox`) have the same
/// columns of state, lease, due time, attempts and outcome (`state`, `lease_owner`,
/// `next_attempt_at`, `attempts`, `finished_at`, `last_reply`), so their claim, outcomes and purge
/// are written once, here; each queue's own file reads its claimed rows.
extension SQLStoreTransaction {
    public func claimDue<Claim>(
        _ queue: LeasedQueue<Claim>, owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]
    ) throws -> [Claim] {
        guard !claimable.isEmpty else { return [] }
        switch queue.table {
        case .outbox:
            return try queue.claims(.mail(claimDueMail(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        case .smsOutbox:
            return try queue.claims(.sms(claimDueSMS(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        case .webhookDeliveries:
            return try queue.claims(
                .webhooks(claimDueWebhooks(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        }
    }

    public func markSent<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        try leaseFinish(queue.table, id: id, owner: owner, state: .sent, now: now, reply: reply, countAttempt: true)
    }

    public func markDead<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        try leaseFinish(queue.table, id: id, owner: owner, state: .dead, now: now, reply: reply, countAttempt: false)
    }

    /// The columns a finished row of `table` must not keep: mail's body (which holds a live link) and
    /// envelope, an SMS's number.
    private static func erasedOnFinish(_ table: LeasedQueueTable) -> [String] {
        switch table {
        case .outbox: ["body", "envelope_sender", "envelope_recipients"]
        case .smsOutbox: ["recipient"]
        case .webhookDeliveries: []
        }
    }

    /// The claim of the due rows of a lease queue (the same columns of state, lease and due time) in each dialect, and its arguments. `returning` gets
    /// how a column of the claimed row is named in RETURNING ("" in SQLite, "alias." in PostgreSQL).
    ///
    /// The claimable states are bound (the delivery machine's), as an OR chain of comparisons: in
    /// SQLite an IN list of three constants would build a temporary b-tree. The index's own
    /// condition stays written out so SQLite uses it.
    func leaseClaim(
        table queue: LeasedQueueTable, alias: String, owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState],
        returning: (String) -> String
    ) -> (String, [SQLValue]) {
        let table = queue.rawValue
        let states = Array(repeating: "state = ?", count: claimable.count).joined(separator: " OR ")
        let stateValues = claimable.map { SQLValue.text($0.rawValue) }
        let due: [SQLValue] = [.integer(now), .integer(Int64(max(0, limit)))]
        let lease: [SQLValue] = [.text(owner), .integer(leaseUntil)]
        let choice = "SELECT id FROM \(table) WHERE \(Self.unfinished) AND (\(states)) AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"
        switch db.dialect {
        case .sqlite:
            // One statement inside the (BEGIN IMMEDIATE) write transaction: no other connection or
            // process can claim between the choice and the update.
            return (
                """
                UPDATE \(table) SET state = 'claimed', lease_owner = ?, next_attempt_at = ?
                WHERE id IN (\(choice))
                RETURNING \(returning(""))
                """, lease + stateValues + due)
        case .postgres:
            // Several connections claim at once: each locks the rows it chooses and skips those
            // another claim holds, in a short READ COMMITTED transaction (``SQLSession/rowLocked(_:)``).
            // MATERIALIZED fences the choice: without it the planner may update more rows than the LIMIT.
            return (
                """
                WITH due AS MATERIALIZED (\(choice) FOR UPDATE SKIP LOCKED)
                UPDATE \(table) AS \(alias) SET state = 'claimed', lease_owner = ?, next_attempt_at = ?
                FROM due WHERE \(alias).id = due.id
                RETURNING \(returning("\(alias)."))
                """, stateValues + due + lease)
        }
    }

    /// Records claimed row `id` of `table` as finished (`sent` or `dead`) while `owner` holds it,
    /// setting what a finished row must not keep to NULL; false when the lease is no longer `owner`'s.
    private func leaseFinish(
        _ table: LeasedQueueTable, id: Int64, owner: String, state: OutboxState, now: Int64, reply: String, countAttempt: Bool
    ) throws -> Bool {
        let erase = Self.erasedOnFinish(table).map { ", \($0) = NULL" }.joined()
        return try db.rowLocked {
            try db.execute(
                """
                UPDATE \(table.rawValue) SET state = ?, finished_at = ?, last_reply = ?, attempts = attempts + ?, lease_owner = NULL\(erase)
                WHERE id = ? AND state = 'claimed' AND lease_owner = ?
                """,
                [.text(state.rawValue), .integer(now), .text(reply), .integer(countAttempt ? 1 : 0), .integer(id), .text(owner)]) == 1
        }
    }

    public func markRetry<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, at: Int64, reply: String) throws -> Bool {
        try db.rowLocked {
            try db.execute(
                """
                UPDATE \(queue.table.rawValue) SET state = 'retrying', next_attempt_at = ?, last_reply = ?, attempts = attempts + 1, lease_owner = NULL
                WHERE id = ? AND state = 'claimed' AND lease_owner = ?
                """,
                [.integer(at), .text(reply), .integer(id), .text(owner)]) == 1
        }
    }

    /// How many of the oldest rows (by id) one purge batch looks at. Finished rows are not
    /// indexed by time (an index would be rewritten by every outcome, the hottest write), so a
    /// batch that looked at every row would scan the whole retention window each round to find
    /// nothing; ids grow with time, so what is old enough is among the oldest rows.
    static let purgeWindow = 5000

    public func purgeFinished<Claim>(_ queue: LeasedQueue<Claim>, before: Int64, limit: Int) throws -> Int {
        let table = queue.table.rawValue
        return try pruneBatch(
            table: table, key: "id", condition: "(state = 'sent' OR state = 'dead') AND finished_at < ?", [.integer(before)],
            limit: limit, from: "(SELECT id, state, finished_at FROM \(table) ORDER BY id LIMIT \(Self.purgeWindow)) AS oldest")
    }
}
