import PosternCore

/// A row a queue worker claims from a lease queue (an SMS, a webhook delivery): what its
/// delivery life starts from.
protocol LeasedRow: Sendable {
    var id: Int64 { get }
    /// Failed attempts so far.
    var attempts: Int { get }
    /// For a claimed row: when its lease ends.
    var nextAttemptAt: Int64 { get }
    var createdAt: Int64 { get }
    var giveUpAt: Int64 { get }
}

extension SMSMessage: LeasedRow {}
extension WebhookDelivery: LeasedRow {}

extension QueueWorkerThread {
    /// Claims up to one batch of `queue`'s due rows as this worker's owner, in one write
    /// transaction, leased for `policy.lease`. A store failure is logged ("`noun` claim failed")
    /// and claims nothing: what was due stays due.
    func claimDue<Claim>(from queue: LeasedQueue<Claim>, policy: DeliveryPolicy, now: Int64) -> [Claim] {
        let (owner, limit) = (self.owner, batchSize)
        do {
            return try store.write { tx in
                try tx.claimDue(
                    queue, owner: owner, now: now, leaseUntil: now + policy.lease, limit: limit, claimable: DeliveryStateMachine.claimableStates)
            }
        } catch {
            logger.warning("\(queue.noun) claim failed", ["error": "\(error)"])
            return []
        }
    }

    /// The delivery life of `row`, claimed by this worker: its failed attempts so far, and the
    /// deadline `policy` sets from when it was queued and when it is given up.
    func life(of row: some LeasedRow, policy: DeliveryPolicy) -> DeliveryStateMachine {
        DeliveryStateMachine(
            state: .claimed(owner: owner, until: row.nextAttemptAt), failedAttempts: row.attempts,
            deadline: policy.deadline(createdAt: row.createdAt, giveUpAt: row.giveUpAt), policy: policy)
    }

    /// Records `action` on claimed row `id` of `queue` at `now` in one write that syncs later;
    /// `alongside` runs first in the same transaction (the webhook's disabling of a 410
    /// endpoint). True when written; false when there is nothing to write (`.deliver`, `.none`)
    /// or the store failed, which is logged ("`noun` outcome not recorded", with `fields`).
    ///
    /// A lost outcome costs a repeat (the lease runs out, the row is tried again), never a loss:
    /// the outbox's reasoning for `writeSyncingLater`.
    func record<Claim>(
        _ action: DeliveryStateMachine.Action, id: Int64, in queue: LeasedQueue<Claim>, now: Int64, fields: [String: String],
        alongside: @escaping @Sendable (any StoreWriter) throws -> Void = { _ in }
    ) -> Bool {
        let owner = self.owner
        let write: @Sendable (any StoreWriter) throws -> Bool
        switch action {
        case .markSent(let reply): write = { try $0.markSent(queue, id: id, owner: owner, now: now, reply: reply) }
        case .retry(let at, let reply): write = { try $0.markRetry(queue, id: id, owner: owner, at: at, reply: reply) }
        case .markDead(let reply, _): write = { try $0.markDead(queue, id: id, owner: owner, now: now, reply: reply) }
        case .deliver, .none:
            return false
        }
        do {
            _ = try store.writeSyncingLater { tx in
                try alongside(tx)
                return try write(tx)
            }
            return true
        } catch {
            logger.warning("\(queue.noun) outcome not recorded", fields.merging(["error": "\(error)"]) { $1 })
            return false
        }
    }
}
