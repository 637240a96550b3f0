import Foundation
import PosternCore

/// Delivers queued SMS: the webhook worker's shape over the SMS outbox (`sms_outbox`). A thread
/// claims due messages with a lease, asks the composer what each says (nothing: finished
/// unsent), renders it, hands it to the transport and records the outcome through the outbox's
/// ``DeliveryStateMachine``: 2xx sent; network failures, 429 (not before `Retry-After`) and 5xx
/// retried with backoff and jitter until the code's expiry; other 4xx dead, the provider's error
/// code kept on the message. It wakes on the store's doorbell (a commit that queued SMS) and
/// polls as the fallback, and keeps a heartbeat (``HeartbeatLoop``): claims of a worker that
/// died are taken back by any live daemon.
///
/// `@unchecked Sendable`: its stored properties are immutable; the transport is made and used on
/// the worker's own thread.
public final class SMSWorker: @unchecked Sendable {
    /// Messages one claim takes: each call may take the whole timeout, and all must fit in the lease.
    static let batchSize = 4

    private let store: any Store
    private let policy: DeliveryPolicy
    private let composer: any SMSComposing
    private let renderer: SMSRenderer
    private let transport: SMSTransportFactory
    private let clock: any WallClock
    private let logger: Logger
    private let metrics: SMSMetrics
    private let expiresInMinutes: Int64
    private let worker: QueueWorkerThread
    var owner: String { worker.owner }
    /// The worker's heartbeat, and the taking back of dead daemons' claims.
    public var heartbeat: HeartbeatLoop { worker.heartbeat }

    /// A worker that is not started yet. `transport` makes the transport on the worker's thread.
    public init(
        store: any Store, policy: DeliveryPolicy, composer: any SMSComposing, renderer: SMSRenderer,
        transport: @escaping SMSTransportFactory, clock: any WallClock, metrics: SMSMetrics, expiresInMinutes: Int64 = 10,
        pollInterval: Duration = .seconds(2), monotonic: any MonotonicClock = SystemMonotonicClock(), logger: Logger,
        liveness: LivenessPolicy = .standard, reclaims: ReclaimMetrics = ReclaimMetrics()
    ) {
        self.store = store
        self.policy = policy
        self.composer = composer
        self.renderer = renderer
        self.transport = transport
        self.clock = clock
        self.metrics = metrics
        self.expiresInMinutes = expiresInMinutes
        self.logger = logger
        let worker = QueueWorkerThread(
            name: "sms", prefix: "sms", store: store, batchSize: Self.batchSize, pollInterval: pollInterval, clock: clock,
            monotonic: monotonic, liveness: liveness, reclaims: reclaims, logger: logger)
        self.worker = worker
        store.mailDoorbell.listen { worker.wake() }
    }

    /// Starts the heartbeat (its first beat at once), then the thread. Does nothing when started already.
    public func start() {
        let (make, logger) = (transport, self.logger)
        worker.start(
            prepare: { () -> UncheckedTransport<any SMSTransport>? in
                do { return UncheckedTransport(try make()) } catch {
                    logger.error("sms transport cannot be set up; no SMS is sent", ["error": "\(error)"])
                    return nil
                }
            },
            deliver: { [self] in deliverDue(transport: $0.transport) })
    }

    /// Asks the worker to stop and waits until it has (a batch in progress is finished first,
    /// each call within its timeout); then removes its heartbeat.
    public func stop() { worker.stop() }

    /// Claims up to one batch of due messages and tries each once; returns how many it claimed.
    /// Store failures are logged, never thrown: the claims run out and are taken again.
    @discardableResult
    public func deliverDue(transport: any SMSTransport) -> Int {
        let claims = worker.claimDue(from: .sms, policy: policy, now: clock.unixSeconds())
        for message in claims { deliver(message, transport: transport) }
        return claims.count
    }

    /// Tries one claimed message and records the outcome.
    private func deliver(_ message: SMSMessage, transport: any SMSTransport) {
        var life = worker.life(of: message, policy: policy)
        let now = clock.unixSeconds()
        var action: DeliveryStateMachine.Action
        var content: SMSContent?
        if let recipient = message.recipient {
            do {
                content = try composer.composeSMS(message.intent, recipient: recipient)
                action = life.prepare(now: now, isSuppressed: false, hasMail: content != nil)
            } catch {
                // The store failed: try again later, as a failed attempt.
                action = life.attempted(
                    .transient(reply: "not composed: \(error.code)", connectionFailed: false), now: now, jitter: Double.random(in: 0..<1))
            }
        } else {
            action = .markDead(reply: "not sent: the message has no number", suppress: false)
        }
        var status = 0
        if action == .deliver, let content, let recipient = message.recipient {
            let rendered = renderer.render(content, expiresInMinutes: expiresInMinutes)
            let response = transport.send(OutgoingSMS(reference: "sms_\(message.id)", to: recipient, body: rendered.body))
            status = response.status
            action = life.attempted(
                response.outcome, now: clock.unixSeconds(), jitter: Double.random(in: 0..<1), retryAfter: response.retryAfter)
        }
        record(action, message: message, status: status)
    }

    private func record(_ action: DeliveryStateMachine.Action, message: SMSMessage, status: Int) {
        let country = message.countryCallingCode
        // The log names the message, its intent and its country: never the number or the text.
        let fields = ["sms_id": String(message.id), "intent": message.intent.name, "country": "+\(country)", "status": String(status)]
        guard worker.record(action, id: message.id, in: .sms, now: clock.unixSeconds(), fields: fields) else { return }
        switch action {
        case .markSent(let reply):
            if reply != "nothing to send" { metrics.count(.sent, callingCode: country) }
            logger.info("sms sent", fields.merging(["reply": reply]) { $1 })
        case .retry(let at, let reply):
            logger.info("sms attempt failed, will retry", fields.merging(["retry_at": String(at), "reply": reply]) { $1 })
        case .markDead(let reply, _):
            metrics.count(.dead, callingCode: country)
            logger.warning("sms dead", fields.merging(["reply": reply]) { $1 })
        case .deliver, .none:
            break
        }
    }
}
