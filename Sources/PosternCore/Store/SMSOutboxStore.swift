/// One SMS in the outbox, as the store records it: a sibling of the mail outbox's message row
/// (`sms_outbox`), with the same states, lease and due time, and nothing composed: the text is
/// made at each attempt from the intent (``SMSComposing``), so no code waits in the table.
///
/// The recipient is kept only while the message may still be sent: a finished message keeps its
/// country code (for metrics and `postern sms status`), not its number.
public struct SMSMessage: Sendable, Hashable {
    public let id: Int64
    /// What the request asked to be sent.
    public let intent: SMSIntent
    /// Who it goes to; nil once the message is sent or dead (the number is erased then).
    public let recipient: PhoneNumber?
    /// The recipient's country calling code (kept after the number is erased).
    public let countryCallingCode: String
    public let state: OutboxState
    /// Failed attempts so far.
    public let attempts: Int
    /// When it is due (for a claimed one: when its lease ends).
    public let nextAttemptAt: Int64
    public let createdAt: Int64
    /// When an undelivered message is abandoned (for a code: when it expires).
    public let giveUpAt: Int64
    public let finishedAt: Int64?
    /// The provider's last answer (status, its message id or error code), or why it was
    /// abandoned: never the number, the text or a credential.
    public let lastReply: String?

    public init(
        id: Int64, intent: SMSIntent, recipient: PhoneNumber?, countryCallingCode: String, state: OutboxState, attempts: Int,
        nextAttemptAt: Int64, createdAt: Int64, giveUpAt: Int64, finishedAt: Int64?, lastReply: String?
    ) {
        self.id = id
        self.intent = intent
        self.recipient = recipient
        self.countryCallingCode = countryCallingCode
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.giveUpAt = giveUpAt
        self.finishedAt = finishedAt
        self.lastReply = lastReply
    }
}

/// SMS outbox reads, part of every `StoreReader`.
public protocol SMSOutboxReader {
    /// Messages in `state` (all states when nil), newest first, at most `limit`.
    func smsMessages(state: OutboxState?, limit: Int) throws -> [SMSMessage]
    /// One message.
    func smsMessage(id: Int64) throws -> SMSMessage?
}

/// SMS outbox changes, part of every `StoreWriter`: a message is queued in the same transaction
/// as the request that causes it (a phone claim's write), after ``SMSAdmission``. Its claim,
/// outcomes and purge are the lease queue's (``LeasedQueueWriter`` with ``LeasedQueue/sms``): a
/// finished message's number is erased.
public protocol SMSOutboxWriter: SMSOutboxReader {
    /// Queues `intent` for `recipient`; returns the message id. `giveUpAt` is when an undelivered
    /// message is abandoned (for a code: when it expires). Rings the store's doorbell at commit.
    func enqueueSMS(_ intent: SMSIntent, recipient: PhoneNumber, now: Int64, giveUpAt: Int64) throws -> Int64
}
