import Foundation
import PosternCore
import Synchronization

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
        /// Worker threads, each with one connection (`--workers`, default 4).
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
            self.workers = max(1, workers)
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
    private let signal: WorkerSignal
    /// The pool's heartbeat, and the taking back of dead daemons' claims.
    public let heartbeat: HeartbeatLoop

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
        let signal = WorkerSignal(workers: configuration.workers)
        self.signal = signal
        heartbeat = HeartbeatLoop(
            owner: configuration.ownerPrefix, store: store, policy: configuration.liveness, clock: clock, monotonic: monotonic,
            metrics: reclaims, logger: logger)
        // The store rings after every commit that queued mail, whoever queued it.
        store.mailDoorbell.listen { signal.wake() }
    }

    /// Starts the workers; calling it again does nothing.
    public func start() {
        guard signal.begin() else { return }
        // Before the first claim: the row exists while this pool holds claims, and what a dead
        // predecessor held is due again when the workers first look.
        heartbeat.start()
        let recorder = OutcomeRecorder(store: store)
        signal.onAllFinished { recorder.stop() }
        for index in 0..<configuration.workers {
            let worker = OutboxWorker(
                owner: "\(configuration.ownerPrefix):\(index)", index: index, store: store, makeTransport: makeTransport, compose: compose,
                clock: clock, random: random, configuration: configuration, logger: logger, signal: signal, recorder: recorder)
            // Bulk work that waits on the relay 4 times a message: its wake-ups should not preempt
            // the store's writer or the request threads (``ThreadScheduling/batch``).
            Thread.start(named: "outbox-\(index)", scheduling: .batch) { worker.run() }
        }
    }

    /// Workers look at once (the store's doorbell calls this after a commit that queued mail).
    public func wake() { signal.wake() }

    /// Whether ``stop(timeout:)`` has been called. Internal, for tests that act while a stop is
    /// under way (a send held in flight is let go only once the workers were told to stop).
    var isStopping: Bool { signal.isStopping(worker: 0) }

    /// Stops the workers and waits for them: in-flight sends finish and are recorded, unstarted
    /// claims are given back; then the heartbeat is removed. Returns false if they did not stop
    /// within `timeout` seconds (their claims then wait out their leases: without a heartbeat
    /// row nobody takes them back early).
    @discardableResult
    public func stop(timeout: Double = 120) -> Bool {
        let stopped = signal.stop(timeout: timeout)
        heartbeat.stop()
        return stopped
    }
}

/// Wake-ups and stopping, shared by the pool and its workers: one wake-up queue per worker, so
/// new mail wakes every idle worker (as ``OutboxWorkerPool/wake()`` promises), not just one of
/// them; closing the queues stops the workers.
///
/// A wake-up is a token left in the worker's queue: one that comes while the worker looks for
/// work is still there when it next waits, so it is never lost; the worker drains its tokens
/// before each look (``takeWakeUps(worker:)``), so one it has already acted on does not count.
final class WorkerSignal: Sendable {
    /// A new-mail wake-up.
    struct WakeUp: Sendable {}

    /// Per worker: its wake-ups; the worker is the one consumer.
    private let wakeUps: [BatchQueue<WakeUp>]
    private let clock: any MonotonicClock
    private let started = Mutex(false)
    /// Workers not yet finished, for the one action run after the last.
    private let running: Mutex<Int>
    private let whenAllFinished = Mutex<(@Sendable () -> Void)?>(nil)

    /// The signal for `workers` workers, timing waits on `clock`.
    init(workers: Int, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.clock = clock
        wakeUps = (0..<max(1, workers)).map { _ in BatchQueue(consumers: 1, clock: clock) }
        running = Mutex(max(1, workers))
    }

    /// Runs `action` once the last worker has finished.
    func onAllFinished(_ action: @escaping @Sendable () -> Void) {
        whenAllFinished.withLock { $0 = action }
    }

    /// True the first time: the workers may start.
    func begin() -> Bool {
        started.withLock { started in
            defer { started = true }
            return !started
        }
    }

    func wake() {
        for queue in wakeUps { queue.appendUnlessWaiting(WakeUp()) }
    }

    /// Drops the worker's pending wake-ups: called before it looks for work, which covers them.
    func takeWakeUps(worker: Int) {
        _ = wakeUps[worker].takeWaiting(upTo: .max)
    }

    func isStopping(worker: Int) -> Bool { wakeUps[worker].isClosed }

    /// Sleeps until woken, stopped, or `seconds` passed; true when woken by new mail.
    @discardableResult
    func wait(worker: Int, seconds: Double) -> Bool {
        let queue = wakeUps[worker]
        switch queue.take(upTo: .max, until: clock.now() + .seconds(seconds)) {
        case .items: return !queue.isClosed
        case .timedOut, .closed: return false
        }
    }

    func workerFinished(worker: Int) {
        wakeUps[worker].consumerEnded()
        let last = running.withLock { running in
            running -= 1
            return running == 0
        }
        if last, let action = whenAllFinished.withLock({ $0 }) { action() }
    }

    func stop(timeout: Double) -> Bool {
        let deadline = clock.now() + .seconds(timeout)
        // Never started: nothing to wait for, and a later start finds the workers stopped.
        let wasStarted = started.withLock { started in
            defer { started = true }
            return started
        }
        for queue in wakeUps { queue.close() }
        guard wasStarted else { return true }
        return wakeUps.allSatisfy { $0.waitForConsumers(until: deadline) }
    }
}
