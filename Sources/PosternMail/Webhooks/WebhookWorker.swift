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
    /// Opens the secrets of stored endpoints (nil: only `--webhook-urls` are delivered).
    private let endpoints: WebhookEndpointVault?
    private let metrics: WebhookMetrics
    private let transport: @Sendable () -> any WebhookTransport
    private let clock: any WallClock
    private let logger: Logger
    private let worker: QueueWorkerThread
    /// The worker's heartbeat, and the taking back of dead daemons' claims.
    public var heartbeat: HeartbeatLoop { worker.heartbeat }

    /// A worker that is not started yet. `transport` makes the transport on the worker's thread.
    public init(
        store: any Store, configuration: WebhookConfiguration, secrets: [WebhookSecret], endpoints: WebhookEndpointVault? = nil,
        transport: @escaping @Sendable () -> any WebhookTransport, clock: any WallClock, metrics: WebhookMetrics = WebhookMetrics(),
        pollInterval: Duration = .seconds(1), monotonic: any MonotonicClock = SystemMonotonicClock(), logger: Logger,
        liveness: LivenessPolicy = .standard, reclaims: ReclaimMetrics = ReclaimMetrics()
    ) {
        self.store = store
        self.configuration = configuration
        self.secrets = secrets
        self.endpoints = endpoints
        self.metrics = metrics
        self.transport = transport
        self.clock = clock
        self.logger = logger
        worker = QueueWorkerThread(
            name: "webhooks", prefix: "webhooks", store: store, batchSize: Self.batchSize, pollInterval: pollInterval,
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
        let claims = worker.claimDue(from: .webhooks, policy: configuration.policy, now: clock.unixSeconds())
        // The stored endpoints, read once a batch: a removed one gets nothing more, a rotated
        // secret signs from the next batch on.
        var stored: [String: WebhookEndpointRecord] = [:]
        if claims.contains(where: { $0.delivery.endpointID != nil }) {
            do {
                for record in try store.read({ try $0.webhookEndpoints() }) { stored[record.id] = record }
            } catch {
                // The claims run out and are taken again.
                logger.warning("webhook endpoints not read", ["error": "\(error)"])
                return claims.count
            }
        }
        // An endpoint that answers 410 is not tried again for the rest of the batch either.
        var gone: Set<String> = []
        for claim in claims
        where deliver(claim, disabled: claim.endpointDisabled || gone.contains(claim.delivery.endpoint), stored: stored, transport: transport) {
            gone.insert(claim.delivery.endpoint)
        }
        return claims.count
    }

    /// Tries one claimed delivery and records the outcome; true when the endpoint answered 410.
    private func deliver(
        _ claim: WebhookClaim, disabled: Bool, stored: [String: WebhookEndpointRecord], transport: any WebhookTransport
    ) -> Bool {
        let delivery = claim.delivery
        let policy = configuration.policy
        var life = worker.life(of: delivery, policy: policy)
        let now = clock.unixSeconds()
        var action: DeliveryStateMachine.Action
        var signers = secrets
        if disabled {
            action = .markDead(reply: "not sent: the endpoint answered 410 Gone and is disabled", suppress: false)
        } else if let id = delivery.endpointID {
            if let record = stored[id], record.url == delivery.endpoint, let endpoints {
                do {
                    signers = try endpoints.secrets(of: record, now: now)
                    action = life.prepare(now: now, isSuppressed: false, hasMail: true)
                } catch {
                    // A master key that does not open the secret: nothing unsigned goes out.
                    action = life.attempted(
                        .transient(reply: "not sent: the endpoint's secret does not open under the master key", connectionFailed: false),
                        now: now, jitter: Double.random(in: 0..<1))
                }
            } else {
                action = .markDead(reply: "not sent: the endpoint was removed", suppress: false)
            }
        } else if !configuration.endpoints.contains(delivery.endpoint) {
            action = .markDead(reply: "not sent: the endpoint is no longer configured", suppress: false)
        } else {
            action = life.prepare(now: now, isSuppressed: false, hasMail: true)
        }
        var status = 0
        if action == .deliver {
            let headers = WebhookSignedHeaders(id: delivery.webhookID, timestamp: now, body: delivery.body, secrets: signers)
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
        let (endpoint, now) = (delivery.endpoint, clock.unixSeconds())
        let fields = ["webhook_id": delivery.webhookID, "type": delivery.eventType, "status": String(status)]
        // The same webhook-id is sent again when an outcome is lost.
        let written = worker.record(action, id: delivery.id, in: .webhooks, now: now, fields: fields) { tx in
            if case .markDead(let reply, true) = action { try tx.disableWebhookEndpoint(endpoint, reason: reply, now: now) }
        }
        guard written else { return }
        switch action {
        case .markSent:
            metrics.count(.delivered)
            logger.info("webhook delivered", fields)
        case .retry(let at, let reply):
            metrics.count(.failed)
            logger.info("webhook attempt failed, will retry", fields.merging(["retry_at": String(at), "reply": reply]) { $1 })
        case .markDead(let reply, let disable):
            metrics.count(disable ? .disabled : .abandoned)
            logger.warning(disable ? "webhook endpoint disabled (410 Gone)" : "webhook abandoned", fields.merging(["reply": reply]) { $1 })
        case .deliver, .none:
            break
        }
    }
}
