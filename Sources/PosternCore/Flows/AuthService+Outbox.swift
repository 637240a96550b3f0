extension AuthService {
    /// Outbox metadata for operators (never bodies), newest first.
    /// - Throws: `AuthError.unavailable`.
    public func outboxMessages(state: OutboxState?, limit: Int) throws(AuthError) -> [OutboxMessage] {
        try read { tx in try tx.outboxMessages(state: state, limit: limit) }
    }

    /// Message counts by state.
    /// - Throws: `AuthError.unavailable`.
    public func outboxCounts() throws(AuthError) -> OutboxCounts {
        try read { tx in try tx.outboxCounts() }
    }

    /// Queues a dead message again and lifts the suppression of its address (the operator asks
    /// for another try); false unless it was dead.
    /// - Throws: `AuthError.unavailable`.
    public func retryOutboxMessage(id: Int64) throws(AuthError) -> Bool {
        let now = clock.unixSeconds()
        let retried = try write { tx -> Bool in
            guard let message = try tx.outboxMessage(id: id), message.state == .dead else { return false }
            _ = try tx.unsuppress(message.recipient)
            return try tx.retryDead(id: id, now: now)
        }
        if retried { mailQueued() }
        return retried
    }

    /// Deletes sent and dead messages finished more than `olderThan` seconds ago.
    /// - Throws: `AuthError.unavailable`.
    public func purgeOutbox(olderThan: Int64) throws(AuthError) -> Int {
        let before = clock.unixSeconds() - olderThan
        return try write { tx in try tx.purgeFinished(before: before) }
    }
}
