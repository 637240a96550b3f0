import Foundation
import PosternCore
import Synchronization

/// One queue's part of a ``DeliveryEngine``'s work, on one of its threads: claim a batch, deliver
/// it, record the outcomes. The mail outbox's lane is an ``OutboxWorker``; the SMS outbox's and
/// the webhook deliveries' run their worker's `deliverDue` (``LeasedQueueWorker``).
///
/// A lane is made for one thread and used only there (what it makes in ``prepare()``, a
/// transport, never leaves that thread).
protocol DeliveryLane: AnyObject, Sendable {
    /// Runs once on the thread, before the first batch; false ends the thread (no transport).
    func prepare() -> Bool
    /// Claims up to one batch and works through it; true when more may be due at once (the
    /// thread claims again without waiting). `stopping` says whether the engine is stopping.
    func deliverBatch(stopping: () -> Bool) -> Bool
    /// Nothing more was due: the thread is about to wait for a wake-up or its poll.
    func idle()
    /// The thread is ending (stopped): give back what is held, close what was made.
    func finish()
}

extension DeliveryLane {
    func prepare() -> Bool { true }
    func idle() {}
    func finish() {}
}

/// The delivery engine every queue runs on (mail, SMS, webhooks): a heartbeat in the store, one
/// thread per lane, wake-ups (the store's doorbell, ``wake()``), the poll for work queued by
/// another process or due for retry, and one stop. The queues differ only in their lanes.
///
/// - ``start(_:)`` beats first (before any claim: the row exists while the engine holds claims,
///   and what a dead predecessor held is due again when the lanes first look), then starts the
///   threads. Each runs its lane's batches back to back while they say more may be due, then
///   waits for a wake-up or its poll; a woken lane starts after a random moment below
///   `wakeJitter` (the outbox's enumeration resistance: see `OutboxWorker`).
/// - ``stop(timeout:)`` lets each lane finish its batch and ``DeliveryLane/finish()``, waits for
///   the threads, then removes the heartbeat.
final class DeliveryEngine: Sendable {
    /// How the engine's threads run.
    struct Threads: Sendable {
        /// How many (one lane each).
        var count: Int
        /// The name of thread `index`, for the operating system (`outbox-0`, `sms`).
        var name: @Sendable (Int) -> String
        var scheduling: ThreadScheduling = .normal
        /// How long an idle thread waits before it looks again unwoken.
        var pollInterval: Duration
        /// A woken thread starts after a random 0..<`wakeJitter` seconds; 0 starts at once.
        var wakeJitter: Double = 0
    }

    /// The engine's heartbeat, and the taking back of dead daemons' claims.
    let heartbeat: HeartbeatLoop
    private let threads: Threads
    private let signal: WorkerSignal
    private let random: @Sendable () -> Double

    /// An engine (not started) whose heartbeat beats as `owner` (the lease owner, or the prefix of
    /// its lanes' owners) on `monotonic`, and whose threads wait on `waits`; `random` is a number
    /// in 0..<1.
    init(
        owner: String, store: any Store, threads: Threads, liveness: LivenessPolicy, clock: any WallClock, monotonic: any MonotonicClock,
        waits: any MonotonicClock, reclaims: ReclaimMetrics, logger: Logger?, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        heartbeat = HeartbeatLoop(
            owner: owner, store: store, policy: liveness, clock: clock, monotonic: monotonic, metrics: reclaims, logger: logger)
        self.threads = threads
        self.random = random
        signal = WorkerSignal(workers: threads.count, clock: waits)
    }

    /// Wakes the threads after every commit of `store` that queued mail or SMS, whoever queued it.
    func wakesOnDoorbell(of store: any Store) {
        let signal = self.signal
        store.mailDoorbell.listen { signal.wake() }
    }

    /// Starts the heartbeat, then one thread for each lane `lanes` makes (called on the first
    /// start only, with the thread's index; `afterLast` runs once the last thread has ended).
    /// Does nothing when started already.
    func start(_ lanes: () -> (lanes: [any DeliveryLane], afterLast: @Sendable () -> Void)) {
        guard signal.begin() else { return }
        heartbeat.start()
        let (made, afterLast) = lanes()
        signal.onAllFinished(afterLast)
        for index in 0..<threads.count {
            guard made.indices.contains(index) else {
                signal.workerFinished(worker: index)
                continue
            }
            let lane = made[index]
            Thread.start(named: threads.name(index), scheduling: threads.scheduling) { [self] in run(lane, worker: index) }
        }
    }

    /// The threads look at once.
    func wake() { signal.wake() }

    /// Whether ``stop(timeout:)`` has been called.
    var isStopping: Bool { signal.isStopping(worker: 0) }

    /// Stops the threads and waits for them (each finishes its batch, then its lane's
    /// ``DeliveryLane/finish()``), then removes the heartbeat. Returns false if they did not stop
    /// within `timeout` seconds (nil: no limit).
    @discardableResult
    func stop(timeout: Double? = nil) -> Bool {
        let stopped = signal.stop(timeout: timeout)
        heartbeat.stop()
        return stopped
    }

    private func run(_ lane: any DeliveryLane, worker index: Int) {
        defer { signal.workerFinished(worker: index) }
        guard lane.prepare() else { return }
        defer { lane.finish() }
        let signal = self.signal
        while !signal.isStopping(worker: index) {
            signal.takeWakeUps(worker: index)
            if lane.deliverBatch(stopping: { signal.isStopping(worker: index) }) { continue }
            lane.idle()
            if signal.wait(worker: index, for: threads.pollInterval), threads.wakeJitter > 0 {
                // Woken by new work: start after a random moment, so that the work a request
                // causes (mail or no mail) does not land on the requests that follow it and time
                // cannot tell an existing address from an unknown one.
                Thread.sleep(forTimeInterval: random() * threads.wakeJitter)
            }
        }
    }
}

/// Wake-ups and stopping, shared by the engine and its threads: one wake-up queue per thread, so
/// new work wakes every idle thread (as ``DeliveryEngine/wake()`` promises), not just one of them;
/// closing the queues stops the threads.
///
/// A wake-up is a token left in the thread's queue: one that comes while the thread looks for
/// work is still there when it next waits, so it is never lost; the thread drains its tokens
/// before each look (``takeWakeUps(worker:)``), so one it has already acted on does not count.
final class WorkerSignal: Sendable {
    /// A new-work wake-up.
    struct WakeUp: Sendable {}

    /// Per thread: its wake-ups; the thread is the one consumer.
    private let wakeUps: [BatchQueue<WakeUp>]
    private let clock: any MonotonicClock
    private let started = Mutex(false)
    /// Threads not yet finished, for the one action run after the last.
    private let running: Mutex<Int>
    private let whenAllFinished = Mutex<(@Sendable () -> Void)?>(nil)

    /// The signal for `workers` threads, timing waits on `clock`.
    init(workers: Int, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.clock = clock
        wakeUps = (0..<max(1, workers)).map { _ in BatchQueue(consumers: 1, clock: clock) }
        running = Mutex(max(1, workers))
    }

    /// Runs `action` once the last thread has finished.
    func onAllFinished(_ action: @escaping @Sendable () -> Void) {
        whenAllFinished.withLock { $0 = action }
    }

    /// True the first time: the threads may start.
    func begin() -> Bool {
        started.withLock { started in
            defer { started = true }
            return !started
        }
    }

    func wake() {
        for queue in wakeUps { queue.appendUnlessWaiting(WakeUp()) }
    }

    /// Drops the thread's pending wake-ups: called before it looks for work, which covers them.
    func takeWakeUps(worker: Int) {
        _ = wakeUps[worker].takeWaiting(upTo: .max)
    }

    func isStopping(worker: Int) -> Bool { wakeUps[worker].isClosed }

    /// Sleeps until woken, stopped, or `interval` passed; true when woken by new work.
    @discardableResult
    func wait(worker: Int, for interval: Duration) -> Bool {
        let queue = wakeUps[worker]
        switch queue.take(upTo: .max, until: clock.now() + interval) {
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

    /// Closes the queues and waits for the threads until `timeout` seconds (nil: no limit).
    func stop(timeout: Double?) -> Bool {
        let deadline = timeout.map { clock.now() + .seconds($0) }
        // Never started: nothing to wait for, and a later start finds the threads stopped.
        let wasStarted = started.withLock { started in
            defer { started = true }
            return started
        }
        for queue in wakeUps { queue.close() }
        guard wasStarted else { return true }
        return wakeUps.allSatisfy { $0.waitForConsumers(until: deadline) }
    }
}
