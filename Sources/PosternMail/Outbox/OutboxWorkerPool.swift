import Foundation
import PosternCore

/// The outbox's delivery workers: N threads, each with its own transport connection, claiming due
/// messages with a lease, composing them on first claim, sending, and recording the outcome.
///
/// - Wakes at once when ``wake()`` is called (by whoever enqueued mail, after its transaction
///   committed) and polls every `pollInterval` for mail queued by another process or due for retry.
/// - Records each outcome while the next messages are sent, and completes no message while more
///   than two records before it are uncommitted (fsynced within the store's sync interval:
///   `Store.writeSyncingLater`), so a crash of the process re-sends at most three messages per
///   worker (``OutboxWorker/recordsInFlight``), and a crash of the machine the mail of that
///   interval.
/// - ``stop()`` lets in-flight sends finish, records them, and gives back unstarted claims.
/// - Keeps a heartbeat in the store (``HeartbeatLoop``, under ``Configuration/ownerPrefix``): a
///   pool that dies without stopping has its claims taken back by any live pool within seconds
///   of its last beat (on SQLite, by the next pool to start, at once), not when their lease runs
///   out; and this pool takes back the claims of the dead.
public final class OutboxWorkerPool: Sendable {
    /// Decides what messages say: the content stage, given the messages of a claim that have no
    /// body yet (the first time each is claimed), all at once so that it can read the store once
    /// for them. Returns one result per message, in order: nil means nothing is to be sent (the
    /// message is finished unsent), a failure is a transient one (the message is retried with
    /// backoff), and a missing result counts as a failure.
    public typealias Compose = @Sendable ([OutboxMessage]) -> [Result<OutgoingMail?, any Error>]

    /// A content stage that composes each message on its own with `compose`.
    public static func composingEach(_ compose: @escaping @Sendable (OutboxMessage) throws -> OutgoingMail?) -> Compose {
        { messages in messages.map { message in Result { try compose(message) } } }
    }

    /// How the pool runs.
    public struct Configuration: Sendable {
        /// Worker threads, each with one connection (`--workers`, default 4); 0: none, this daemon
        /// delivers no mail (another on the same database does).
        public var workers: Int
        /// Backoff, deadline and lease.
        public var policy: DeliveryPolicy
        /// The most messages one worker claims at a time: it starts with 4 and doubles while each
        /// claim comes back full (a backlog). 32, not more: a worker sends its claims one after the
        /// other, so the mail a dead daemon held (due first once taken back) waits for some worker
        /// to finish its batch and then for that batch's sends — with 64 that was 9 s of one
        /// worker's sends under a backlog on a loaded machine. Not fewer: a worker waits for each
        /// claim's commit with its connection idle, about 0.5 ms however many it claims. In a drain
        /// of 118,425 messages, 32 made that wait 17.7–20.5 µs a message instead of 31.6–34.8 with
        /// 16, and the drain 5.7 % faster (5,828/5,482/5,617 against 5,071/5,496/5,211 a second,
        /// alternating); 64 waited 14–18 µs and drained no faster than 32.
        public var batchSize: Int
        /// Seconds between polls for mail this process was not told about.
        public var pollInterval: Double
        /// Prefix of each worker's lease owner name; unique per process by default.
        public var ownerPrefix: String
        /// A woken worker starts after a random 0..<`wakeJitter` seconds (enumeration resistance:
        /// see `OutboxWorker`); 0 starts at once.
        public var wakeJitter: Double
        /// How often the pool's heartbeat is written, and how much silence makes a daemon dead.
        public var liveness: LivenessPolicy
        /// Queues the `mail.sent`, `mail.deferred` and `mail.failed` webhook events with each
        /// outcome record; nil queues none.
        public var events: EventLedger?
        /// Writes each attempt to the delivery log (`outbox_attempts`) with its outcome record;
        /// nil writes none.
        public var deliveryLog: DeliveryLog?

        /// The configuration; the defaults are the production values.
        public init(
            workers: Int = 4, policy: DeliveryPolicy = .standard, batchSize: Int = 32, pollInterval: Double = 1,
            wakeJitter: Double = 0.25, liveness: LivenessPolicy = .standard, events: EventLedger? = nil,
            deliveryLog: DeliveryLog? = nil,
            ownerPrefix: String = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UInt32.random(in: 0...UInt32.max))"
        ) {
            self.workers = max(0, workers)
            self.policy = policy
            self.batchSize = max(1, batchSize)
            self.pollInterval = max(0.01, pollInterval)
            self.ownerPrefix = ownerPrefix
            self.wakeJitter = max(0, wakeJitter)
            self.liveness = liveness
            self.events = events
            self.deliveryLog = deliveryLog
        }
    }

    private let store: any Store
    private let makeTransport: MailTransportFactory
    private let compose: Compose
    private let clock: any WallClock
    private let random: @Sendable () -> Double
    private let configuration: Configuration
    private let logger: Logger?
    /// The threads, their wake-ups and the heartbeat.
    private let engine: DeliveryEngine
    /// The pool's heartbeat, and the taking back of dead daemons' claims.
    public var heartbeat: HeartbeatLoop { engine.heartbeat }

    /// A pool over `store`, sending through transports from `transport`.
    ///
    /// - Parameters:
    ///   - random: a number in 0..<1 for backoff jitter.
    ///   - logger: where delivery events go (no bodies, no links); nil for none.
    ///   - monotonic: times the heartbeat's interval.
    ///   - reclaims: counts the claims the heartbeat takes back, for `/metrics`.
    public init(
        store: any Store, transport: @escaping MailTransportFactory, compose: @escaping Compose,
        clock: any WallClock = SystemClock(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        configuration: Configuration = Configuration(), logger: Logger? = nil,
        monotonic: any MonotonicClock = SystemMonotonicClock(), reclaims: ReclaimMetrics = ReclaimMetrics()
    ) {
        self.store = store
        self.makeTransport = transport
        self.compose = compose
        self.clock = clock
        self.random = random
        self.configuration = configuration
        self.logger = logger
        // Bulk work that waits on the relay 4 times a message: its wake-ups should not preempt
        // the store's writer or the request threads (``ThreadScheduling/batch``).
        let threads = DeliveryEngine.Threads(
            count: configuration.workers, name: { "outbox-\($0)" }, scheduling: .batch, pollInterval: .seconds(configuration.pollInterval),
            wakeJitter: configuration.wakeJitter)
        engine = DeliveryEngine(
            owner: configuration.ownerPrefix, store: store, threads: threads, liveness: configuration.liveness, clock: clock,
            monotonic: monotonic, waits: SystemMonotonicClock(), reclaims: reclaims, logger: logger, random: random)
        // The store rings after every commit that queued mail, whoever queued it.
        engine.wakesOnDoorbell(of: store)
    }

    /// Starts the workers; calling it again does nothing, and so does a pool of none.
    public func start() {
        guard configuration.workers > 0 else { return }
        engine.start { [self] in
            let recorder = OutcomeRecorder(store: store)
            let workers = (0..<configuration.workers).map { index in
                OutboxWorker(
                    owner: "\(configuration.ownerPrefix):\(index)", store: store, makeTransport: makeTransport, compose: compose, clock: clock,
                    random: random, configuration: configuration, logger: logger, recorder: recorder)
            }
            return (workers, { recorder.stop() })
        }
    }

    /// Workers look at once (the store's doorbell calls this after a commit that queued mail).
    public func wake() { engine.wake() }

    /// Whether ``stop(timeout:)`` has been called. Internal, for tests that act while a stop is
    /// under way (a send held in flight is let go only once the workers were told to stop).
    var isStopping: Bool { engine.isStopping }

    /// Stops the workers and waits for them: in-flight sends finish and are recorded, unstarted
    /// claims are given back; then the heartbeat is removed. Returns false if they did not stop
    /// within `timeout` seconds (their claims then wait out their leases: without a heartbeat
    /// row nobody takes them back early).
    @discardableResult
    public func stop(timeout: Double = 120) -> Bool {
        engine.stop(timeout: timeout)
    }
}
