/// The tables of the store's lease queues: the mail outbox, the SMS outbox and the webhook
/// deliveries. Their rows have the same columns of state, lease, due time, attempts and outcome,
/// so one set of operations (``LeasedQueueWriter``) claims, finishes and purges them all.
public enum LeasedQueueTable: String, Sendable, Hashable, CaseIterable {
    case outbox
    case smsOutbox = "sms_outbox"
    case webhookDeliveries = "webhook_deliveries"
}

/// What one claim took from a lease queue: each queue's claim is its own type (mail carries its
/// stored body and suppression, a webhook delivery whether its endpoint is disabled).
public enum LeasedClaims: Sendable {
    case mail([OutboxClaim])
    case sms([SMSMessage])
    case webhooks([WebhookClaim])
}

/// One lease queue of the store (``mail``, ``sms``, ``webhooks``): the table it names, and the
/// type a claim of it returns. Only these three exist, so a store's claim of a queue always
/// answers with that queue's claims.
public struct LeasedQueue<Claim: Sendable>: Sendable, Hashable {
    /// The queue's table.
    public let table: LeasedQueueTable
    /// The word log lines name it by: "outbox", "sms", "webhook".
    public let noun: String
    private let unwrap: @Sendable (LeasedClaims) -> [Claim]?

    private init(_ table: LeasedQueueTable, noun: String, unwrap: @escaping @Sendable (LeasedClaims) -> [Claim]?) {
        self.table = table
        self.noun = noun
        self.unwrap = unwrap
    }

    /// This queue's claims out of `claimed`, which a store took from ``table``.
    /// - Throws: `StoreError.corrupt` when `claimed` holds another queue's claims (a store that
    ///   claimed from the wrong table).
    public func claims(_ claimed: LeasedClaims) throws -> [Claim] {
        guard let claims = unwrap(claimed) else { throw StoreError.corrupt("a claim of \(table.rawValue) answered another queue's rows") }
        return claims
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.table == rhs.table }
    public func hash(into hasher: inout Hasher) { hasher.combine(table) }
}

extension LeasedQueue where Claim == OutboxClaim {
    /// The mail outbox (`outbox`).
    public static var mail: Self {
        Self(.outbox, noun: "outbox") { if case .mail(let claims) = $0 { claims } else { nil } }
    }
}

extension LeasedQueue where Claim == SMSMessage {
    /// The SMS outbox (`sms_outbox`).
    public static var sms: Self {
        Self(.smsOutbox, noun: "sms") { if case .sms(let claims) = $0 { claims } else { nil } }
    }
}

extension LeasedQueue where Claim == WebhookClaim {
    /// The webhook deliveries (`webhook_deliveries`).
    public static var webhooks: Self {
        Self(.webhookDeliveries, noun: "webhook") { if case .webhooks(let claims) = $0 { claims } else { nil } }
    }
}

/// The lease operations every queue shares, part of every `StoreWriter`. What only one queue
/// has (mail's stored body, leases and suppressions; webhook endpoints; enqueueing) stays in
/// that queue's protocol.
///
/// The outcome operations take the lease `owner` and change a row only while that owner still
/// holds it, so a worker whose lease ran out (and whose row another worker claimed) cannot
/// overwrite the newer attempt; they return false then.
public protocol LeasedQueueWriter {
    /// Claims up to `limit` rows of `queue` in one of the `claimable` states and due at `now`
    /// (`nextAttemptAt <= now`) for `owner` until `leaseUntil`, oldest due first; returns them
    /// oldest queued first. Within one transaction, so two workers (or processes) never claim the
    /// same row. The states and the lease are the delivery machine's decisions
    /// (``DeliveryBatchMachine/ClaimRequest``).
    func claimDue<Claim>(
        _ queue: LeasedQueue<Claim>, owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]
    ) throws -> [Claim]
    /// Records claimed row `id` as sent with the server's `reply`, one more attempt counted;
    /// erases what a finished row must not keep (mail's body, an SMS's number).
    func markSent<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool
    /// Records a failed attempt on claimed row `id`: due again at `at`, one more attempt counted.
    func markRetry<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, at: Int64, reply: String) throws -> Bool
    /// Records claimed row `id` as dead with `reply` (no attempt counted); erases what a finished
    /// row must not keep.
    func markDead<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool
    /// Deletes at most `limit` sent and dead rows of `queue` finished before `before` (for mail,
    /// the row is the message's delivery record: its outcome and the server's reply); returns
    /// how many.
    func purgeFinished<Claim>(_ queue: LeasedQueue<Claim>, before: Int64, limit: Int) throws -> Int
}

extension LeasedQueueWriter {
    /// Claims what ``DeliveryStateMachine/claimableStates`` allows (for tools and tests that do
    /// not run a ``DeliveryBatchMachine``).
    public func claimDue<Claim>(_ queue: LeasedQueue<Claim>, owner: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [Claim] {
        try claimDue(queue, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: DeliveryStateMachine.claimableStates)
    }
}
