import PosternCore

extension SQLStoreTransaction {
    public func recordOutboxAttempt(_ attempt: OutboxAttempt) throws {
        // A log line nothing reads back in the transaction: it rides with the outcome's commit.
        try db.executeDeferred(
            """
            INSERT INTO outbox_attempts
                (message_id, recipient_hash, attempted_at, duration_ms, transport, reply_code, reply, outcome)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(attempt.messageID), .blob(attempt.recipientHash), .integer(attempt.attemptedAt),
                .integer(attempt.durationMilliseconds), .text(attempt.transport),
                attempt.replyCode.map { SQLValue.integer(Int64($0)) } ?? .null, .text(attempt.reply), .text(attempt.outcome.rawValue),
            ])
    }

    public func outboxAttempts(messageID: Int64) throws -> [OutboxAttempt] {
        var attempts: [OutboxAttempt] = []
        try db.query(
            """
            SELECT message_id, recipient_hash, attempted_at, duration_ms, transport, reply_code, reply, outcome
            FROM outbox_attempts WHERE message_id = ? ORDER BY attempted_at, id
            """,
            [.integer(messageID)]
        ) { row in
            guard let hash = row.blob(1), let transport = row.text(4), let reply = row.text(6),
                let outcome = row.text(7).flatMap(OutboxAttempt.Outcome.init(rawValue:))
            else { throw StoreError.corrupt("outbox attempt row") }
            attempts.append(
                OutboxAttempt(
                    messageID: row.integer(0), recipientHash: hash, attemptedAt: row.integer(2), durationMilliseconds: row.integer(3),
                    transport: transport, replyCode: row.optionalInteger(5).map { Int($0) }, reply: reply, outcome: outcome))
        }
        return attempts
    }

    public func outboxMessageIDs(recipientHash: [UInt8], limit: Int) throws -> [Int64] {
        var ids: [Int64] = []
        try db.query(
            "SELECT message_id FROM outbox_attempts WHERE recipient_hash = ? GROUP BY message_id ORDER BY message_id DESC LIMIT ?",
            [.blob(recipientHash), .integer(Int64(max(0, limit)))]
        ) { ids.append($0.integer(0)) }
        return ids
    }

    public func purgeOutboxAttempts(before: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "outbox_attempts", key: "id", condition: "attempted_at < ?", [.integer(before)], limit: limit)
    }
}
