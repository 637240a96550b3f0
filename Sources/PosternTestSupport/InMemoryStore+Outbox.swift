import PosternCore

extension InMemoryStore.Transaction {
    private func metadata(_ mail: InMemoryStore.QueuedMail, id: Int64) -> OutboxMessage {
        var message = OutboxMessage(
            id: id, intent: mail.intent, recipient: mail.recipient, state: mail.state, attempts: mail.attempts,
            nextAttemptAt: mail.nextAttemptAt, createdAt: mail.createdAt, giveUpAt: mail.giveUpAt,
            finishedAt: mail.finishedAt, lastReply: mail.lastReply, messageID: mail.mail?.messageID ?? mail.messageID)
        message.bounce = mail.bounce
        return message
    }

    public func outboxCounts() throws -> OutboxCounts {
        var counts = OutboxCounts()
        for mail in state.outbox where !mail.purged { counts.byState[mail.state, default: 0] += 1 }
        return counts
    }

    public func outboxUnfinishedCount() throws -> Int { try outboxCounts().unfinished }

    public func outboxMessages(state wanted: OutboxState?, limit: Int) throws -> [OutboxMessage] {
        state.outbox.enumerated().reversed()
            .filter { !$0.element.purged && (wanted == nil || $0.element.state == wanted) }
            .prefix(max(0, limit))
            .map { metadata($0.element, id: Int64($0.offset + 1)) }
    }

    public func outboxMessage(id: Int64) throws -> OutboxMessage? {
        let index = Int(id) - 1
        return state.outbox.indices.contains(index) && !state.outbox[index].purged ? metadata(state.outbox[index], id: id) : nil
    }

    public func isSuppressed(_ address: EmailAddress) throws -> Bool { state.suppressions[address.normalized] != nil }

    public func suppression(of address: EmailAddress) throws -> Suppression? {
        state.suppressions[address.normalized].map { Suppression(address: address.normalized, storedReason: $0.reason, suppressedAt: $0.at) }
    }

    public func suppressions(after cursor: SuppressionCursor?, limit: Int) throws -> [Suppression] {
        let rows = state.suppressions.map { Suppression(address: $0.key, storedReason: $0.value.reason, suppressedAt: $0.value.at) }
            .filter { cursor?.precedes(suppressedAt: $0.suppressedAt, address: $0.address) ?? true }
            .sorted { ($0.suppressedAt, $0.address) > ($1.suppressedAt, $1.address) }
        return Array(rows.prefix(max(0, limit)))
    }

    public func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64 {
        queuedMail = true
        state.outbox.append(.init(intent: intent, recipient: recipient, createdAt: now, giveUpAt: giveUpAt, nextAttemptAt: now))
        return Int64(state.outbox.count)
    }

    /// Claims due mail (the lease queue's claim of ``LeasedQueue/mail``), each with its stored
    /// body and whether its recipient is suppressed.
    func claimDueMail(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) -> [OutboxClaim] {
        claims?.add()
        return InMemoryLeaseQueue.claim(&state.outbox, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)
            .map { index in
                let mail = state.outbox[index]
                return OutboxClaim(
                    message: metadata(mail, id: Int64(index + 1)), mail: mail.mail,
                    isSuppressed: state.suppressions[mail.recipient.normalized] != nil)
            }
    }

    public func storeMail(id: Int64, owner: String, mail: OutgoingMail) throws -> Bool {
        guard let index = InMemoryLeaseQueue.held(state.outbox, id, by: owner) else { return false }
        state.outbox[index].mail = mail
        state.outbox[index].messageID = mail.messageID
        return true
    }

    public func extendLeases(owner: String, leaseUntil: Int64) throws {
        for index in state.outbox.indices where state.outbox[index].state == .claimed && state.outbox[index].leaseOwner == owner {
            state.outbox[index].nextAttemptAt = leaseUntil
        }
    }

    public func releaseLeases(owner: String, _ releases: [OutboxRelease]) throws -> Int {
        var released = 0
        for release in releases {
            guard let index = InMemoryLeaseQueue.held(state.outbox, release.id, by: owner) else { continue }
            state.outbox[index].state = release.state
            state.outbox[index].nextAttemptAt = release.at
            state.outbox[index].leaseOwner = nil
            released += 1
        }
        return released
    }

    public func suppress(_ address: EmailAddress, reason: String, now: Int64) throws {
        // A complaint stays, as the SQL upsert's condition keeps it.
        if let kept = state.suppressions[address.normalized], SuppressionReason(stored: kept.reason) == .complaint,
            SuppressionReason(stored: reason) != .complaint {
            return
        }
        state.suppressions[address.normalized] = (reason, now)
    }

    public func recordBounce(id: Int64, _ bounce: OutboxBounce) throws -> Bool {
        let index = Int(id) - 1
        guard state.outbox.indices.contains(index), !state.outbox[index].purged, bounce.replaces(state.outbox[index].bounce) else {
            return false
        }
        state.outbox[index].bounce = bounce
        return true
    }

    public func unsuppress(_ address: EmailAddress) throws -> Bool {
        state.suppressions.removeValue(forKey: address.normalized) != nil
    }

    public func retryDead(id: Int64, now: Int64) throws -> Bool {
        queuedMail = true
        let index = Int(id) - 1
        guard state.outbox.indices.contains(index), state.outbox[index].state == .dead, !state.outbox[index].purged else { return false }
        state.outbox[index].state = .queued
        state.outbox[index].attempts = 0
        state.outbox[index].nextAttemptAt = now
        state.outbox[index].createdAt = now
        state.outbox[index].finishedAt = nil
        state.outbox[index].messageID = nil
        return true
    }
}

extension InMemoryStore {
    /// A queued message, as far as Core's tests look at it.
    public struct QueuedMail: Sendable, Equatable {
        public var intent: MailIntent
        public var recipient: EmailAddress
        public var createdAt: Int64
        public var giveUpAt: Int64
        public var nextAttemptAt: Int64 = 0
        public var state: OutboxState = .queued
        public var attempts = 0
        public var leaseOwner: String?
        public var finishedAt: Int64?
        public var lastReply: String?
        public var messageID: String?
        public var mail: OutgoingMail?
        public var purged = false
        public var bounce: OutboxBounce?
    }
}

extension InMemoryStore {
    /// Everything queued so far, oldest first.
    public func queuedMail() -> [QueuedMail] { snapshot().outbox }
}
