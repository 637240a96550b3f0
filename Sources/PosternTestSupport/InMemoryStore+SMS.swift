import PosternCore

extension InMemoryStore {
    /// An SMS outbox message as the in-memory store keeps it.
    public struct QueuedSMS: Sendable {
        public var intent: SMSIntent
        /// Nil once finished (erased, as the real stores do).
        public var recipient: PhoneNumber?
        public var countryCallingCode: String
        public var state: OutboxState = .queued
        public var attempts = 0
        public var nextAttemptAt: Int64
        public var leaseOwner: String?
        public var createdAt: Int64
        public var giveUpAt: Int64
        public var finishedAt: Int64?
        public var lastReply: String?
        public var purged = false
    }
}

extension InMemoryStore.Transaction {
    private func smsMessage(at index: Int) -> SMSMessage {
        let row = state.sms[index]
        return SMSMessage(
            id: Int64(index + 1), intent: row.intent, recipient: row.recipient, countryCallingCode: row.countryCallingCode,
            state: row.state, attempts: row.attempts, nextAttemptAt: row.nextAttemptAt, createdAt: row.createdAt,
            giveUpAt: row.giveUpAt, finishedAt: row.finishedAt, lastReply: row.lastReply)
    }

    public func smsMessages(state wanted: OutboxState?, limit: Int) throws -> [SMSMessage] {
        state.sms.indices.reversed()
            .filter { !state.sms[$0].purged && (wanted == nil || state.sms[$0].state == wanted) }
            .prefix(max(0, limit))
            .map(smsMessage(at:))
    }

    public func smsMessage(id: Int64) throws -> SMSMessage? {
        let index = Int(id) - 1
        guard state.sms.indices.contains(index), !state.sms[index].purged else { return nil }
        return smsMessage(at: index)
    }

    public func enqueueSMS(_ intent: SMSIntent, recipient: PhoneNumber, now: Int64, giveUpAt: Int64) throws -> Int64 {
        queuedMail = true
        state.sms.append(
            .init(
                intent: intent, recipient: recipient, countryCallingCode: recipient.countryCallingCode, nextAttemptAt: now,
                createdAt: now, giveUpAt: giveUpAt))
        return Int64(state.sms.count)
    }

    /// Claims due SMS (the lease queue's claim of ``LeasedQueue/sms``).
    func claimDueSMS(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) -> [SMSMessage] {
        InMemoryLeaseQueue.claim(&state.sms, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)
            .map(smsMessage(at:))
    }
}
