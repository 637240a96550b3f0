import PosternCore

extension SQLStoreTransaction {
    /// The due index's condition, written out so SQLite can use that partial index (it matches
    /// the condition as written): queries for one worker's claims then read only unfinished rows.
    /// Two constants, not three: see `Schema.outboxWithoutListsMigration`.
    public static let unfinished = "state NOT IN ('sent', 'dead')"

    private static let metadataColumns = metadataColumns("")
    /// How many columns `metadataColumns` names: a claim's own columns follow them.
    private static let metadataCount: Int32 = 16

    /// The message columns `readMessage` reads, each prefixed with `table` (`o.`, or nothing).
    private static func metadataColumns(_ table: String) -> String {
        [
            "id", "intent", "recipient_local", "recipient_domain", "state", "attempts", "next_attempt_at", "created_at",
            "give_up_at", "finished_at", "last_reply", "message_id", "bounce_kind", "bounce_status", "bounce_detail", "bounced_at",
        ].map { table + $0 }.joined(separator: ", ")
    }

    /// Reads the columns of `metadataColumns` starting at column 0.
    private func readMessage(_ row: any SQLRow) throws -> OutboxMessage {
        guard let intentText = row.text(1), let local = row.text(2), let domain = row.text(3),
            let state = row.text(4).flatMap(OutboxState.init(rawValue:)),
            let intent = MailIntent(storageText: intentText)
        else { throw StoreError.corrupt("outbox row") }
        var message = OutboxMessage(
            id: row.integer(0), intent: intent, recipient: EmailAddress.restored(localPart: local, domain: domain),
            state: state, attempts: Int(row.integer(5)), nextAttemptAt: row.integer(6), createdAt: row.integer(7),
            giveUpAt: row.integer(8), finishedAt: row.optionalInteger(9), lastReply: row.text(10), messageID: row.text(11))
        if let kind = row.text(12).flatMap(OutboxBounce.Kind.init(rawValue:)), let at = row.optionalInteger(15) {
            message.bounce = OutboxBounce(kind: kind, status: row.text(13) ?? "", detail: row.text(14) ?? "", at: at)
        }
        return message
    }

    // MARK: reads

    public func outboxCounts() throws -> OutboxCounts {
        var counts = OutboxCounts()
        try db.query("SELECT state, count(*) FROM outbox GROUP BY state") { row in
            guard let state = row.text(0).flatMap(OutboxState.init(rawValue:)) else { throw StoreError.corrupt("outbox state") }
            counts.byState[state] = Int(row.integer(1))
        }
        return counts
    }

    public func outboxMessages(state: OutboxState?, limit: Int) throws -> [OutboxMessage] {
        var messages: [OutboxMessage] = []
        let limit = SQLValue.integer(Int64(max(0, limit)))
        if let state {
            try db.query(
                "SELECT \(Self.metadataColumns) FROM outbox WHERE state = ? ORDER BY id DESC LIMIT ?", [.text(state.rawValue), limit]
            ) { messages.append(try readMessage($0)) }
        } else {
            try db.query("SELECT \(Self.metadataColumns) FROM outbox ORDER BY id DESC LIMIT ?", [limit]) {
                messages.append(try readMessage($0))
            }
        }
        return messages
    }

    public func outboxMessage(id: Int64) throws -> OutboxMessage? {
        try db.first("SELECT \(Self.metadataColumns) FROM outbox WHERE id = ?", [.integer(id)], readMessage)
    }

    public func outboxUnfinishedCount() throws -> Int {
        Int(try db.first("SELECT count(*) FROM outbox WHERE \(Self.unfinished)") { $0.integer(0) } ?? 0)
    }

    public func isSuppressed(_ address: EmailAddress) throws -> Bool {
        try db.first("SELECT 1 FROM suppressions WHERE address = ?", [.text(address.normalized)]) { _ in true } ?? false
    }

    public func suppression(of address: EmailAddress) throws -> Suppression? {
        try db.first("SELECT address, reason, created_at FROM suppressions WHERE address = ?", [.text(address.normalized)], readSuppression)
    }

    public func suppressions(after cursor: SuppressionCursor?, limit: Int) throws -> [Suppression] {
        var found: [Suppression] = []
        let limit = SQLValue.integer(Int64(max(0, limit)))
        if let cursor {
            try db.query(
                """
                SELECT address, reason, created_at FROM suppressions WHERE (created_at, address) < (?, ?)
                ORDER BY created_at DESC, address DESC LIMIT ?
                """,
                // A row value, read from the index `suppressions_newest_first` at the cursor (as the
                // user list's: the `OR` form read the index down from the newest row).
                [.integer(cursor.suppressedAt), .text(cursor.address), limit]
            ) { found.append(try readSuppression($0)) }
        } else {
            try db.query("SELECT address, reason, created_at FROM suppressions ORDER BY created_at DESC, address DESC LIMIT ?", [limit]) {
                found.append(try readSuppression($0))
            }
        }
        return found
    }

    /// A row of `suppressions`: address, reason, created_at.
    private func readSuppression(_ row: any SQLRow) throws -> Suppression {
        guard let address = row.text(0), let reason = row.text(1) else { throw StoreError.corrupt("suppressions row") }
        return Suppression(address: address, storedReason: reason, suppressedAt: row.integer(2))
    }

    // MARK: changes

    public func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64 {
        queuedMail = true
        return try db.insertReturningID(Self.enqueueSQL, Self.enqueueValues(intent, recipient: recipient, now: now, giveUpAt: giveUpAt))
    }

    public func queue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws {
        queuedMail = true
        try db.executeDeferred(Self.enqueueSQL, Self.enqueueValues(intent, recipient: recipient, now: now, giveUpAt: giveUpAt))
    }

    private static let enqueueSQL = """
        INSERT INTO outbox (intent, recipient_local, recipient_domain, recipient_normalized, state, next_attempt_at, created_at, give_up_at)
        VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)
        """

    private static func enqueueValues(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) -> [SQLValue] {
        [
            .text(intent.storageText), .text(recipient.localPart), .text(recipient.domain), .text(recipient.normalized),
            .integer(now), .integer(now), .integer(giveUpAt),
        ]
    }

    /// Claims due mail (``LeasedQueueWriter/claimDue(_:owner:now:leaseUntil:limit:claimable:)`` of
    /// ``LeasedQueue/mail``), each with its stored body and whether its recipient is suppressed.
    func claimDueMail(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) throws -> [OutboxClaim] {
        var claims: [OutboxClaim] = []
        let (sql, args) = leaseClaim(
            table: .outbox, alias: "o", owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable
        ) { row in
            "\(Self.metadataColumns(row)), \(row)envelope_sender, \(row)envelope_recipients, \(row)body, "
                + "EXISTS (SELECT 1 FROM suppressions WHERE address = \(row)recipient_normalized)"
        }
        try db.rowLocked {
            try db.query(sql, args) { row in
                let message = try readMessage(row)
                var mail: OutgoingMail?
                let after = Self.metadataCount
                if let messageID = message.messageID, let sender = row.text(after), let recipients = row.text(after + 1),
                    let body = row.blob(after + 2)
                {
                    let envelope = MailEnvelope(sender: sender, recipients: recipients.split(separator: "\n").map(String.init))
                    mail = OutgoingMail(storedMessageID: messageID, envelope: envelope, bytes: body)
                }
                claims.append(OutboxClaim(message: message, mail: mail, isSuppressed: row.integer(after + 3) != 0))
            }
        }
        return claims.sorted { ($0.message.createdAt, $0.message.id) < ($1.message.createdAt, $1.message.id) }
    }

    public func storeMail(id: Int64, owner: String, mail: OutgoingMail) throws -> Bool {
        try db.rowLocked {
            try db.execute(
                "UPDATE outbox SET message_id = ?, envelope_sender = ?, envelope_recipients = ?, body = ? WHERE id = ? AND state = 'claimed' AND lease_owner = ?",
                [
                    .text(mail.messageID), .text(mail.envelope.sender), .text(mail.envelope.recipients.joined(separator: "\n")),
                    .blob(mail.bytes), .integer(id), .text(owner),
                ]) == 1
        }
    }

    public func extendLeases(owner: String, leaseUntil: Int64) throws {
        _ = try db.rowLocked {
            try db.execute(
                "UPDATE outbox SET next_attempt_at = ? WHERE \(Self.unfinished) AND state = 'claimed' AND lease_owner = ?",
                [.integer(leaseUntil), .text(owner)])
        }
    }

    public func releaseLeases(owner: String, _ releases: [OutboxRelease]) throws -> Int {
        try db.rowLocked {
            // The state and the due time are the delivery machine's; the lease checks are the store's.
            var released = 0
            for release in releases {
                released += try db.execute(
                    """
                    UPDATE outbox SET state = ?, next_attempt_at = ?, lease_owner = NULL
                    WHERE \(Self.unfinished) AND state = 'claimed' AND lease_owner = ? AND id = ?
                    """,
                    [.text(release.state.rawValue), .integer(release.at), .text(owner), .integer(release.id)])
            }
            return released
        }
    }

    public func recordBounce(id: Int64, _ bounce: OutboxBounce) throws -> Bool {
        // A delay replaces only nothing or another delay (OutboxBounce.replaces), in the statement.
        let changed = try db.execute(
            """
            UPDATE outbox SET bounce_kind = ?, bounce_status = ?, bounce_detail = ?, bounced_at = ?
            WHERE id = ? AND (? <> 'delayed' OR bounce_kind IS NULL OR bounce_kind = 'delayed')
            """,
            [.text(bounce.kind.rawValue), .text(bounce.status), .text(bounce.detail), .integer(bounce.at), .integer(id),
             .text(bounce.kind.rawValue)])
        return changed > 0
    }

    public func suppress(_ address: EmailAddress, reason: String, now: Int64) throws {
        _ = try db.rowLocked {
            try db.execute(
                """
                INSERT INTO suppressions (address, reason, created_at) VALUES (?, ?, ?)
                ON CONFLICT (address) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at
                WHERE suppressions.reason NOT LIKE 'complaint%' OR excluded.reason LIKE 'complaint%'
                """,
                [.text(address.normalized), .text(reason), .integer(now)])
        }
    }

    public func unsuppress(_ address: EmailAddress) throws -> Bool {
        try db.execute("DELETE FROM suppressions WHERE address = ?", [.text(address.normalized)]) == 1
    }

    public func retryDead(id: Int64, now: Int64) throws -> Bool {
        queuedMail = true
        return try db.execute(
            """
            UPDATE outbox SET state = 'queued', attempts = 0, next_attempt_at = ?, finished_at = NULL, lease_owner = NULL,
                message_id = NULL, created_at = ?
            WHERE id = ? AND state = 'dead'
            """,
            [.integer(now), .integer(now), .integer(id)]) == 1
    }
}
