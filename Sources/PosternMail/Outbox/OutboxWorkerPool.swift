import Foundation
import PosternCore

/// The outbox's delivery workers: N threads, each with its own transport connection, claiming due
/// messages with a lease, composing them on first claim, sending, and recording the outcome.
///
/// - Wakes at once when ``wake()`` is called (by whoever enqueued mail, after its transaction
///   committed) and polls every `pollInterval` for mail queued by another process or due for retry.
/// - Records each outcome before the next send (committed at once, fsynced within the store's
///   sync interval: `Store.writeSyncingLater`), so a crash of the process re-sends at most one
///   message per worker, and a crash of the machine the mail of that interval.
/// - ``stop()`` lets in-flight sends finish, records them, and gives back unstarted claims.
///   A worker that dies without stopping loses its claims when their lease runs out.
public final class OutboxWorkerPool: Sendable {
    /// Decides what a message says: the content stage. Called the first time a message is claimed;
    /// nil means nothing is to be sent (the message is finished unsent). A throw is a transient
    /// failure (the message is retried with backoff).
    public typealias Compose = @Sendable (OutboxMessage) throws -> OutgoingMail?

    /// How the pool runs.
    public struct Configuration: Sendable {
        /// Worker threads, each with one connection (`--workers`, default 4).
        public var workers: Int
        /// Backoff, deadline and lease.
        public var policy: DeliveryPolicy
        /// The most messages one worker claims at a time: it starts with 4 and doubles while each
        /// claim comes back full (a backlog).
        public var batchSize: Int
        /// Seconds between polls for mail this process was not told about.
        public var pollInterval: Double
        /// Prefix of each worker's lease owner name; unique per process by default.
        public var ownerPrefix: String
        /// A woken worker starts after a random 0..<`wakeJitter` seconds (enumeration resistance:
        /// see `OutboxWorker`); 0 starts at once.
        public var wakeJitter: Double

        /// The configuration; the defaults are the production values.
        public init(
            workers: Int = 4, policy: DeliveryPolicy = .standard, batchSize: Int = 64, pollInterval: Double = 1,
            wakeJitter: Double = 0.25,
            ownerPrefix: String = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UInt32.random(in: 0...UInt32.max))"
        ) {
            self.workers = max(1, workers)
            self.policy = policy
            self.batchSize = max(1, batchSize)
            self.pollInterval = max(0.01, pollInterval)
            self.ownerPrefix = ownerPrefix
            self.wakeJitter = max(0, wakeJitter)
        }
    }

    private let store: any Store
    private let makeTransport: MailTransportFactory
    private let compose: Compose
    private let clock: any WallClock
    private let random: @Sendable () -> Double
    private let configuration: Configuration
    private let logger: Logger?
    private let signal = WorkerSignal()

    /// A pool over `store`, sending through transports from `transport`.
    ///
    /// - Parameters:
    ///   - random: a number in 0..<1 for backoff jitter.
    ///   - logger: where delivery events go (no bodies, no links); nil for none.
    public init(
        store: any Store, transport: @escaping MailTransportFactory, compose: @escaping Compose,
        clock: any WallClock = SystemClock(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        configuration: Configuration = Configuration(), logger: Logger? = nil
    ) {
        self.store = store
        self.makeTransport = transport
        self.compose = compose
        self.clock = clock
        self.random = random
        self.configuration = configuration
        self.logger = logger
    }

    /// Starts the workers; calling it again does nothing.
    public func start() {
        guard signal.begin(workers: configuration.workers) else { return }
        let recorder = OutcomeRecorder(store: store)
        signal.onAllFinished { recorder.stop() }
        for index in 0..<configuration.workers {
            let worker = OutboxWorker(
                owner: "\(configuration.ownerPrefix):\(index)", store: store, makeTransport: makeTransport, compose: compose,
                clock: clock, random: random, configuration: configuration, logger: logger, signal: signal, recorder: recorder)
            let thread = Thread { worker.run() }
            thread.name = "postern-outbox-\(index)"
            thread.start()
        }
    }

    /// New mail was queued (call after the enqueuing transaction committed): workers look at once.
    public func wake() { signal.wake() }

    /// Stops the workers and waits for them: in-flight sends finish and are recorded, unstarted
    /// claims are given back. Returns false if they did not stop within `timeout` seconds.
    @discardableResult
    public func stop(timeout: Double = 120) -> Bool { signal.stop(timeout: timeout) }
}

/// Wake-ups and stopping, shared by the pool and its workers.
///
/// `@unchecked Sendable`: every field is read and written only with `condition` locked.
final class WorkerSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var generation: UInt64 = 0
    private var stopping = false
    private var started = false
    private var running = 0
    private var whenAllFinished: (@Sendable () -> Void)?

    /// Runs `action` once the last worker has finished.
    func onAllFinished(_ action: @escaping @Sendable () -> Void) {
        condition.lock()
        whenAllFinished = action
        condition.unlock()
    }

    func begin(workers: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return false }
        started = true
        running = workers
        return true
    }

    func wake() {
        condition.lock()
        generation &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// The wake-up count, read before looking for work so a wake-up during the look is not lost.
    var currentGeneration: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return generation
    }

    var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// Sleeps until woken after `seen`, stopped, or `seconds` passed; true when woken by new mail.
    @discardableResult
    func wait(after seen: UInt64, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while generation == seen && !stopping {
            if !condition.wait(until: deadline) { return false }
        }
        return generation != seen && !stopping
    }

    func workerFinished() {
        condition.lock()
        running -= 1
        let last = running == 0 ? whenAllFinished : nil
        condition.broadcast()
        condition.unlock()
        last?()
    }

    func stop(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while running > 0 {
            if !condition.wait(until: deadline) { return running == 0 }
        }
        return true
    }
}
