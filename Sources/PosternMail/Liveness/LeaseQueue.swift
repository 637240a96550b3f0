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

/// One lease queue as its worker uses it (the SMS outbox, the webhook deliveries): the word its
/// log lines name it by, its claim, and its three outcome writes. The statements themselves are
/// the stores' (`SQLStoreTransaction+LeaseQueue`); this is what the workers share above them.
struct LeaseQueue<Claim: Sendable>: Sendable {
    /// The log lines' word: "sms claim failed", "webhook outcome not recorded".
    let noun: String
    /// Claims up to `limit` due rows in a `claimable` state for `owner`, leased until `leaseUntil`.
    let claim: @Sendable (_ tx: any StoreWriter, _ owner: String, _ now: Int64, _ leaseUntil: Int64, _ limit: Int, _ claimable: [OutboxState])
        throws -> [Claim]
    let markSent: @Sendable (_ tx: any StoreWriter, _ id: Int64, _ owner: String, _ now: Int64, _ reply: String) throws -> Bool
    let markRetry: @Sendable (_ tx: any StoreWriter, _ id: Int64, _ owner: String, _ at: Int64, _ reply: String) throws -> Bool
    let markDead: @Sendable (_ tx: any StoreWriter, _ id: Int64, _ owner: String, _ now: Int64, _ reply: String) throws -> Bool
}

extension QueueWorkerThread {
    /// Claims up to one batch of `queue`'s due rows as this worker's owner, in one write
    /// transaction, leased for `policy.lease`. A store failure is logged ("`noun` claim failed")
    /// and claims nothing: what was due stays due.
    func claimDue<Claim>(from queue: LeaseQueue<Claim>, policy: DeliveryPolicy, now: Int64) -> [Claim] {
        let (owner, limit, claim) = (self.owner, batchSize, queue.claim)
        do {
            return try store.write { tx in
                try claim(tx, owner, now, now + policy.lease, limit, DeliveryStateMachine.claimableStates)
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
        _ action: DeliveryStateMachine.Action, id: Int64, in queue: LeaseQueue<Claim>, now: Int64, fields: [String: String],
        alongside: @escaping @Sendable (any StoreWriter) throws -> Void = { _ in }
    ) -> Bool {
        let owner = self.owner
        let write: @Sendable (any StoreWriter) throws -> Bool
        switch action {
        case .markSent(let reply):
            let mark = queue.markSent
            write = { try mark($0, id, owner, now, reply) }
        case .retry(let at, let reply):
            let mark = queue.markRetry
            write = { try mark($0, id, owner, at, reply) }
        case .markDead(let reply, _):
            let mark = queue.markDead
            write = { try mark($0, id, owner, now, reply) }
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
