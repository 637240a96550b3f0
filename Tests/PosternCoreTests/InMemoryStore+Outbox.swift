import PosternCore

extension InMemoryStore.Transaction {
    func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64 {
        state.outbox.append(.init(intent: intent, recipient: recipient, createdAt: now, giveUpAt: giveUpAt))
        return Int64(state.outbox.count)
    }
}

extension InMemoryStore {
    /// A queued message, as far as Core's tests look at it.
    struct QueuedMail: Sendable, Equatable {
        var intent: MailIntent
        var recipient: EmailAddress
        var createdAt: Int64
        var giveUpAt: Int64
    }
}
