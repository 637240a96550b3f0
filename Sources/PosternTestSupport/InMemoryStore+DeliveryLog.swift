import PosternCore

extension InMemoryStore.Transaction {
    public func recordOutboxAttempt(_ attempt: OutboxAttempt) throws { state.outboxAttempts.append(attempt) }

    public func outboxAttempts(messageID: Int64) throws -> [OutboxAttempt] {
        state.outboxAttempts.enumerated().filter { $0.element.messageID == messageID }
            .sorted { ($0.element.attemptedAt, $0.offset) < ($1.element.attemptedAt, $1.offset) }.map(\.element)
    }

    public func outboxMessageIDs(recipientHash: [UInt8], limit: Int) throws -> [Int64] {
        Array(Set(state.outboxAttempts.filter { $0.recipientHash == recipientHash }.map(\.messageID)).sorted(by: >).prefix(max(0, limit)))
    }

    public func purgeOutboxAttempts(before: Int64, limit: Int) throws -> Int {
        var purged = 0
        state.outboxAttempts.removeAll { attempt in
            guard purged < limit, attempt.attemptedAt < before else { return false }
            purged += 1
            return true
        }
        return purged
    }
}
