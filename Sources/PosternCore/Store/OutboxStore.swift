/// Outbox reads, part of every `StoreReader`. None of them returns a body.
public protocol OutboxReader {
    /// How many messages are in each state.
    func outboxCounts() throws -> OutboxCounts
    /// How many messages are queued, retrying or claimed (cheap: the due index answers it).
    func outboxUnfinishedCount() throws -> Int
    /// Metadata of messages in `state` (all states when nil), newest first, at most `limit`.
    func outboxMessages(state: OutboxState?, limit: Int) throws -> [OutboxMessage]
    /// Metadata of one message.
    func outboxMessage(id: Int64) throws -> OutboxMessage?
    /// Whether mail to `address` (compared by its normalized form) is suppressed.
    func isSuppressed(_ address: EmailAddress) throws -> Bool
    /// The suppression of `address` (compared by its normalized form), or nil.
    func suppression(of address: EmailAddress) throws -> Suppression?
    /// Suppressions newest first (by time, then address, descending), those after `cursor` when
    /// one is given, at most `limit`.
    func suppressions(after cursor: SuppressionCursor?, limit: Int) throws -> [Suppression]
    /// The delivery log of message `id`: every attempt, oldest first.
    func outboxAttempts(messageID: Int64) throws -> [OutboxAttempt]
    /// The messages whose log holds `recipientHash`, newest first, at most `limit`. An operator's
    /// lookup: the log has no index on the hash (SQLite migration 18), so this reads it.
    func outboxMessageIDs(recipientHash: [UInt8], limit: Int) throws -> [Int64]
}

/// Outbox changes, part of every `StoreWriter`: a message is enqueued in the same transaction as
/// the request that caused it.
///
/// The claim, the outcomes and the purge are the lease queue's (``LeasedQueueWriter`` with
/// ``LeasedQueue/mail``); the operations here that take the lease `owner` are lease-checked like
/// them: they change a message only while that owner still holds it, and return false otherwise.
public protocol OutboxWriter: OutboxReader {
    /// Queues `intent` for `recipient`; returns the message id. `giveUpAt` is when an undelivered
    /// message is abandoned (for a link: when it expires).
    func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64
    /// ``enqueue(_:recipient:now:giveUpAt:)`` for a caller that needs no id: a store may send it
    /// with the transaction's next statement or its commit instead of waiting for it (PostgreSQL
    /// pipelines it), so a failure may be thrown by that later call instead.
    func queue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws

    /// Stores the composed mail on a claimed message, so every retry sends the same bytes.
    func storeMail(id: Int64, owner: String, mail: OutgoingMail) throws -> Bool
    /// Moves the leases of `owner`'s claimed messages to `leaseUntil` (a worker still busy).
    func extendLeases(owner: String, leaseUntil: Int64) throws
    /// Gives claimed messages of `owner` back untried, each to the state and due time its
    /// delivery machine chose. Returns how many were still `owner`'s.
    func releaseLeases(owner: String, _ releases: [OutboxRelease]) throws -> Int
    /// Adds `address` to the suppression list at `now`, or moves its reason and time to these.
    /// `reason` is the stored text (``SuppressionReason/stored(_:)``). A complaint stays: another
    /// kind of reason does not replace it (only `unsuppress` ends it).
    func suppress(_ address: EmailAddress, reason: String, now: Int64) throws
    /// Removes `address` from the suppression list; false when it was not on it.
    func unsuppress(_ address: EmailAddress) throws -> Bool
    /// Queues a dead message again: due at `now`, attempts reset, composed afresh, and its 24-hour
    /// window restarted (its `giveUpAt`, the link's expiry, still holds). The recipient stays
    /// suppressed until `unsuppress`. False unless it was dead.
    func retryDead(id: Int64, now: Int64) throws -> Bool
    /// Records what a delivery report said about message `id`, unless it would hide older, worse
    /// news (``OutboxBounce/replaces(_:)``). False when there is no such message or it was kept.
    func recordBounce(id: Int64, _ bounce: OutboxBounce) throws -> Bool
    /// Appends one attempt to the delivery log.
    func recordOutboxAttempt(_ attempt: OutboxAttempt) throws
    /// Deletes at most `limit` log entries of attempts made before `before`; returns how many.
    func purgeOutboxAttempts(before: Int64, limit: Int) throws -> Int
}

extension OutboxWriter {
    /// Enqueues, dropping the id.
    public func queue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws {
        _ = try enqueue(intent, recipient: recipient, now: now, giveUpAt: giveUpAt)
    }

    /// Gives the messages `ids` back untried, due at `at`, each as its delivery machine decides
    /// (``DeliveryStateMachine/release(at:)``) from its recorded attempts.
    public func releaseLeases(owner: String, ids: [Int64], at: Int64) throws -> Int {
        var releases: [OutboxRelease] = []
        for id in ids {
            guard let message = try outboxMessage(id: id), message.state == .claimed else { continue }
            var life = DeliveryStateMachine(claimed: message, owner: owner)
            _ = life.release(at: at)
            releases.append(OutboxRelease(id: id, state: life.recordedState, at: at))
        }
        return try releaseLeases(owner: owner, releases)
    }
}
