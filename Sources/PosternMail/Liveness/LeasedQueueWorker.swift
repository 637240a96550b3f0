import Foundation
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

/// What a worker over one of the store's lease queues (the SMS outbox, the webhook deliveries)
/// runs on: its lease owner, a ``DeliveryEngine`` of one thread (its heartbeat under that owner,
/// its wake-ups and poll), the claim of a batch, each row's delivery life, and the recording of
/// outcomes. One place for that, so the workers differ only in how they deliver.
final class LeasedQueueWorker<Claim: Sendable>: Sendable {
    /// The lease owner the worker claims as (`PREFIX-pid-random`).
    let owner: String
    /// The queue it claims from.
    let queue: LeasedQueue<Claim>
    /// Rows one claim takes (``claimDue(policy:now:)``); a full batch is claimed again at once.
    let batchSize: Int
    private let store: any Store
    private let logger: Logger
    private let engine: DeliveryEngine
    /// The worker's heartbeat, and the taking back of dead daemons' claims.
    var heartbeat: HeartbeatLoop { engine.heartbeat }

    /// A worker (not started) on a thread named `name`, whose owner starts with `prefix`; its
    /// waits are timed on `monotonic`.
    init(
        queue: LeasedQueue<Claim>, name: String, prefix: String, store: any Store, batchSize: Int, pollInterval: Duration,
        clock: any WallClock, monotonic: any MonotonicClock, liveness: LivenessPolicy, reclaims: ReclaimMetrics, logger: Logger
    ) {
        let owner = "\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        self.owner = owner
        self.queue = queue
        self.batchSize = batchSize
        self.store = store
        self.logger = logger
        engine = DeliveryEngine(
            owner: owner, store: store, threads: DeliveryEngine.Threads(count: 1, name: { _ in name }, pollInterval: pollInterval),
            liveness: liveness, clock: clock, monotonic: monotonic, waits: monotonic, reclaims: reclaims, logger: logger)
    }

    /// Wakes the worker after every commit of its store that queued mail or SMS.
    func wakesOnDoorbell() { engine.wakesOnDoorbell(of: store) }

    /// Starts the heartbeat (its first beat at once), then the thread: `prepare` runs once on it
    /// (making the transport; nil ends the thread), then `deliver` with what it made, again and
    /// again, each returning how many it claimed. Does nothing when started already.
    func start<Transport>(prepare: @escaping @Sendable () -> Transport?, deliver: @escaping @Sendable (Transport) -> Int) {
        let batchSize = self.batchSize
        engine.start { ([TransportLane(prepare: prepare, deliver: deliver, batchSize: batchSize)], {}) }
    }

    /// Ends the current wait early.
    func wake() { engine.wake() }

    /// Asks the thread to stop and waits until it has (a batch in progress is finished first),
    /// then removes the heartbeat. Does nothing when it never started.
    func stop() { engine.stop() }

    /// Claims up to one batch of the queue's due rows as this worker's owner, in one write
    /// transaction, leased for `policy.lease`. A store failure is logged ("`noun` claim failed")
    /// and claims nothing: what was due stays due.
    func claimDue(policy: DeliveryPolicy, now: Int64) -> [Claim] {
        let (queue, owner, limit) = (self.queue, self.owner, batchSize)
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

    /// Records `action` on claimed row `id` at `now` in one write that syncs later; `alongside`
    /// runs first in the same transaction (the webhook's disabling of a 410 endpoint). True when
    /// written; false when there is nothing to write (`.deliver`, `.none`) or the store failed,
    /// which is logged ("`noun` outcome not recorded", with `fields`).
    ///
    /// A lost outcome costs a repeat (the lease runs out, the row is tried again), never a loss:
    /// the outbox's reasoning for `writeSyncingLater`.
    func record(
        _ action: DeliveryStateMachine.Action, id: Int64, now: Int64, fields: [String: String],
        alongside: @escaping @Sendable (any StoreWriter) throws -> Void = { _ in }
    ) -> Bool {
        let (queue, owner) = (self.queue, self.owner)
        let write: @Sendable (any StoreWriter) throws -> Bool
        switch action {
        case .markSent(let reply): write = { try $0.markSent(queue, id: id, owner: owner, now: now, reply: reply) }
        case .retry(let at, let reply): write = { try $0.markRetry(queue, id: id, owner: owner, at: at, reply: reply) }
        case .markDead(let reply, _): write = { try $0.markDead(queue, id: id, owner: owner, now: now, reply: reply) }
        case .deliver, .none: return false
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

/// A queue worker's lane: the transport `prepare` makes on the engine's thread, then `deliver`
/// with it; a full batch means more may be due.
///
/// `@unchecked Sendable`: `transport` is made and used on the lane's one thread only.
private final class TransportLane<Transport>: DeliveryLane, @unchecked Sendable {
    private let make: @Sendable () -> Transport?
    private let deliver: @Sendable (Transport) -> Int
    private let batchSize: Int
    private var transport: Transport?

    init(prepare: @escaping @Sendable () -> Transport?, deliver: @escaping @Sendable (Transport) -> Int, batchSize: Int) {
        self.make = prepare
        self.deliver = deliver
        self.batchSize = batchSize
    }

    func prepare() -> Bool {
        transport = make()
        return transport != nil
    }

    func deliverBatch(stopping: () -> Bool) -> Bool {
        guard let transport else { return false }
        return deliver(transport) >= batchSize
    }
}
