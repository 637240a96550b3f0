import Foundation
import PosternCore

/// Delivers queued webhook events: a thread that claims due deliveries with a lease (the outbox's
/// claim, in the `webhook_deliveries` table), signs each attempt with every secret, POSTs it, and
/// records the outcome through the outbox's ``DeliveryStateMachine``: any 2xx is delivered, 410
/// disables the endpoint, anything else is retried with exponential backoff and jitter (not before
/// `Retry-After`) until the policy's deadline. It keeps a heartbeat (``HeartbeatLoop``): a worker
/// that dies has its claims taken back by any live daemon within seconds of its last beat (on
/// SQLite, at once by the next to start), and they are sent again with the same `webhook-id`
/// (at least once).
///
/// `@unchecked Sendable`: its stored properties are immutable; the transport is made and used on
/// the worker's own thread.
public final class WebhookWorker: @unchecked Sendable {
    /// Deliveries one claim takes: each POST may take the whole timeout, and all must fit in the lease.
    static let batchSize = 4

    private let store: any Store
    private let configuration: WebhookConfiguration
    private let secrets: [WebhookSecret]
    private let transport: @Sendable () -> any WebhookTransport
    private let clock: any WallClock
    private let logger: Logger
    private let worker: QueueWorkerThread
    private var owner: String { worker.owner }
    /// The worker's heartbeat, and the taking back of dead daemons' claims.
    public var heartbeat: HeartbeatLoop { worker.heartbeat }

    /// A worker that is not started yet. `transport` makes the transport on the worker's thread.
    public init(
        store: any Store, configuration: WebhookConfiguration, secrets: [WebhookSecret],
        transport: @escaping @Sendable () -> any WebhookTransport, clock: any WallClock,
        pollInterval: Duration = .seconds(1), monotonic: any MonotonicClock = SystemMonotonicClock(), logger: Logger,
        liveness: LivenessPolicy = .standard, reclaims: ReclaimMetrics = ReclaimMetrics()
    ) {
        self.store = store
        self.configuration = configuration
        self.secrets = secrets
        self.transport = transport
        self.clock = clock
        self.logger = logger
        worker = QueueWorkerThread(
            name: "postern-webhooks", prefix: "webhooks", store: store, batchSize: Self.batchSize, pollInterval: pollInterval,
            clock: clock, monotonic: monotonic, liveness: liveness, reclaims: reclaims, logger: logger)
    }

    /// Starts the heartbeat (its first beat at once), then the thread. Does nothing when started already.
    public func start() {
        let make = transport
        worker.start(prepare: { UncheckedTransport(make()) }, deliver: { [self] in deliverDue(transport: $0.transport) })
    }

    /// Asks the worker to stop and waits until it has: a batch in progress is finished first (each
    /// POST within its timeout); then removes its heartbeat. Does nothing when it never started.
    public func stop() { worker.stop() }

    /// Claims up to one batch of due deliveries and tries each once; returns how many it claimed.
    /// Store failures are logged, never thrown: the claims run out and are taken again.
    @discardableResult
    public func deliverDue(transport: any WebhookTransport) -> Int {
        let policy = configuration.policy
        let now = clock.unixSeconds()
        let owner = self.owner
        let claims: [WebhookClaim]
        do {
            claims = try store.write { tx in
                try tx.claimDueWebhooks(
                    owner: owner, now: now, leaseUntil: now + policy.lease, limit: Self.batchSize,
                    claimable: DeliveryStateMachine.claimableStates)
            }
        } catch {
            logger.warning("webhook claim failed", ["error": "\(error)"])
            return 0
        }
        // An endpoint that answers 410 is not tried again for the rest of the batch either.
        var gone: Set<String> = []
        for claim in claims where deliver(claim, disabled: claim.endpointDisabled || gone.contains(claim.delivery.endpoint), transport: transport) {
            gone.insert(claim.delivery.endpoint)
        }
        return claims.count
    }

    /// Tries one claimed delivery and records the outcome; true when the endpoint answered 410.
    private func deliver(_ claim: WebhookClaim, disabled: Bool, transport: any WebhookTransport) -> Bool {
        let delivery = claim.delivery
        let policy = configuration.policy
        var life = DeliveryStateMachine(
            state: .claimed(owner: owner, until: delivery.nextAttemptAt), failedAttempts: delivery.attempts,
            deadline: policy.deadline(createdAt: delivery.createdAt, giveUpAt: delivery.giveUpAt), policy: policy)
        let now = clock.unixSeconds()
        var action: DeliveryStateMachine.Action
        if disabled {
            action = .markDead(reply: "not sent: the endpoint answered 410 Gone and is disabled", suppress: false)
        } else if !configuration.endpoints.contains(delivery.endpoint) {
            action = .markDead(reply: "not sent: the endpoint is no longer configured", suppress: false)
        } else {
            action = life.prepare(now: now, isSuppressed: false, hasMail: true)
        }
        var status = 0
        if action == .deliver {
            let headers = WebhookSignedHeaders(id: delivery.webhookID, timestamp: now, body: delivery.body, secrets: secrets)
            let response = transport.post(url: delivery.endpoint, headers: headers, body: delivery.body)
            status = response.status
            action = life.attempted(
                response.outcome, now: clock.unixSeconds(), jitter: Double.random(in: 0..<1), retryAfter: response.retryAfter)
        }
        record(action, delivery: delivery, status: status)
        if case .markDead(_, true) = action { return true }
        return false
    }

    private func record(_ action: DeliveryStateMachine.Action, delivery: WebhookDelivery, status: Int) {
        let owner = self.owner
        let id = delivery.id
        let now = clock.unixSeconds()
        let fields = ["webhook_id": delivery.webhookID, "type": delivery.eventType, "status": String(status)]
        do {
            // A lost outcome costs a repeat (the lease runs out, the event is sent again with the
            // same webhook-id), never a loss: the outbox's reasoning for writeSyncingLater.
            switch action {
            case .markSent(let reply):
                _ = try store.writeSyncingLater { try $0.markWebhookSent(id: id, owner: owner, now: now, reply: reply) }
                logger.info("webhook delivered", fields)
            case .retry(let at, let reply):
                _ = try store.writeSyncingLater { try $0.markWebhookRetry(id: id, owner: owner, at: at, reply: reply) }
                logger.info("webhook attempt failed, will retry", fields.merging(["retry_at": String(at), "reply": reply]) { $1 })
            case .markDead(let reply, let disable):
                let endpoint = delivery.endpoint
                _ = try store.writeSyncingLater { tx in
                    if disable { try tx.disableWebhookEndpoint(endpoint, reason: reply, now: now) }
                    return try tx.markWebhookDead(id: id, owner: owner, now: now, reply: reply)
                }
                logger.warning(disable ? "webhook endpoint disabled (410 Gone)" : "webhook abandoned", fields.merging(["reply": reply]) { $1 })
            case .deliver, .none:
                break
            }
        } catch {
            logger.warning("webhook outcome not recorded", fields.merging(["error": "\(error)"]) { $1 })
        }
    }
}
