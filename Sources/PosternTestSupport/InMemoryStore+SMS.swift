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

    /// The index of message `id` while `owner` holds it.
    private func heldSMS(_ id: Int64, by owner: String) -> Int? {
        let index = Int(id) - 1
        guard state.sms.indices.contains(index), state.sms[index].state == .claimed, state.sms[index].leaseOwner == owner else {
            return nil
        }
        return index
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

    public func claimDueSMS(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) throws -> [SMSMessage] {
        let due = state.sms.indices
            .filter { !state.sms[$0].purged && claimable.contains(state.sms[$0].state) && state.sms[$0].nextAttemptAt <= now }
            .sorted { (state.sms[$0].nextAttemptAt, $0) < (state.sms[$1].nextAttemptAt, $1) }
            .prefix(max(0, limit))
        return due.sorted().map { index in
            state.sms[index].state = .claimed
            state.sms[index].leaseOwner = owner
            state.sms[index].nextAttemptAt = leaseUntil
            return smsMessage(at: index)
        }
    }

    private func finishSMS(_ id: Int64, owner: String, as final: OutboxState, now: Int64, reply: String, countAttempt: Bool) -> Bool {
        guard let index = heldSMS(id, by: owner) else { return false }
        state.sms[index].state = final
        state.sms[index].finishedAt = now
        state.sms[index].lastReply = reply
        state.sms[index].attempts += countAttempt ? 1 : 0
        state.sms[index].leaseOwner = nil
        state.sms[index].recipient = nil
        return true
    }

    public func markSMSSent(id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        finishSMS(id, owner: owner, as: .sent, now: now, reply: reply, countAttempt: true)
    }

    public func markSMSDead(id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        finishSMS(id, owner: owner, as: .dead, now: now, reply: reply, countAttempt: false)
    }

    public func markSMSRetry(id: Int64, owner: String, at: Int64, reply: String) throws -> Bool {
        guard let index = heldSMS(id, by: owner) else { return false }
        state.sms[index].state = .retrying
        state.sms[index].nextAttemptAt = at
        state.sms[index].lastReply = reply
        state.sms[index].attempts += 1
        state.sms[index].leaseOwner = nil
        return true
    }

    public func purgeFinishedSMS(before: Int64, limit: Int) throws -> Int {
        var purged = 0
        for index in state.sms.indices where purged < limit && !state.sms[index].purged {
            let row = state.sms[index]
            guard row.state == .sent || row.state == .dead, let finished = row.finishedAt, finished < before else { continue }
            state.sms[index].purged = true
            purged += 1
        }
        return purged
    }
}
