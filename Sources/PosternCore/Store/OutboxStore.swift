/// Outbox reads, part of every `StoreReader`.
public protocol OutboxReader {
}

/// Outbox changes, part of every `StoreWriter`: a message is enqueued in the same transaction as
/// the request that caused it.
public protocol OutboxWriter: OutboxReader {
    /// Queues `intent` for `recipient`; returns the message id. `giveUpAt` is when an undelivered
    /// message is abandoned (for a link: when it expires).
    func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64
}
