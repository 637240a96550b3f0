import PosternCore

extension SQLStoreTransaction {
    private static let smsColumns = smsColumns("")

    /// The message columns `readSMS` reads, each prefixed with `table` (`s.`, or nothing).
    private static func smsColumns(_ table: String) -> String {
        [
            "id", "intent", "recipient", "country_code", "state", "attempts", "next_attempt_at", "created_at", "give_up_at",
            "finished_at", "last_reply",
        ].map { table + $0 }.joined(separator: ", ")
    }

    /// Reads the columns of `smsColumns` starting at column 0.
    private func readSMS(_ row: any SQLRow) throws -> SMSMessage {
        guard let intent = row.text(1).flatMap(SMSIntent.init(storageText:)), let country = row.text(3),
            let state = row.text(4).flatMap(OutboxState.init(rawValue:))
        else { throw StoreError.corrupt("sms outbox row") }
        var recipient: PhoneNumber?
        if let sealed = row.blob(2) {
            guard let phoneSeal else { throw StoreError.unavailable("this store was opened without the master key: SMS recipients stay sealed") }
            recipient = try phoneSeal.open(sealed)
        }
        return SMSMessage(
            id: row.integer(0), intent: intent, recipient: recipient, countryCallingCode: country, state: state,
            attempts: Int(row.integer(5)), nextAttemptAt: row.integer(6), createdAt: row.integer(7), giveUpAt: row.integer(8),
            finishedAt: row.optionalInteger(9), lastReply: row.text(10))
    }

    // MARK: reads

    public func smsMessages(state: OutboxState?, limit: Int) throws -> [SMSMessage] {
        var messages: [SMSMessage] = []
        let limit = SQLValue.integer(Int64(max(0, limit)))
        if let state {
            try db.query(
                "SELECT \(Self.smsColumns) FROM sms_outbox WHERE state = ? ORDER BY id DESC LIMIT ?", [.text(state.rawValue), limit]
            ) { messages.append(try readSMS($0)) }
        } else {
            try db.query("SELECT \(Self.smsColumns) FROM sms_outbox ORDER BY id DESC LIMIT ?", [limit]) {
                messages.append(try readSMS($0))
            }
        }
        return messages
    }

    public func smsMessage(id: Int64) throws -> SMSMessage? {
        try db.first("SELECT \(Self.smsColumns) FROM sms_outbox WHERE id = ?", [.integer(id)], readSMS)
    }

    // MARK: changes

    public func enqueueSMS(_ intent: SMSIntent, recipient: PhoneNumber, now: Int64, giveUpAt: Int64) throws -> Int64 {
        guard let phoneSeal else { throw StoreError.unavailable("this store was opened without the master key: it cannot queue SMS") }
        let sealed = try phoneSeal.seal(recipient)
        // The SMS worker listens to the mail doorbell too: one post-commit hook for every queue.
        queuedMail = true
        return try db.insertReturningID(
            """
            INSERT INTO sms_outbox (intent, recipient, country_code, state, next_attempt_at, created_at, give_up_at)
            VALUES (?, ?, ?, 'queued', ?, ?, ?)
            """,
            [
                .text(intent.storageText), .blob(sealed), .text(recipient.countryCallingCode), .integer(now), .integer(now),
                .integer(giveUpAt),
            ])
    }

    /// Claims due SMS (``LeasedQueueWriter/claimDue(_:owner:now:leaseUntil:limit:claimable:)`` of
    /// ``LeasedQueue/sms``), each with its number unsealed.
    func claimDueSMS(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) throws -> [SMSMessage] {
        let (sql, args) = leaseClaim(
            table: .smsOutbox, alias: "s", owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable
        ) { Self.smsColumns($0) }
        var messages: [SMSMessage] = []
        try db.rowLocked { try db.query(sql, args) { messages.append(try readSMS($0)) } }
        return messages.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }
}
