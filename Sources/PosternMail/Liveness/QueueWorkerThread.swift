import Foundation
import PosternCore

/// What a queue's worker (the webhook worker, the SMS worker) runs on: its lease owner, a
/// ``HeartbeatLoop`` under that owner, and a ``BackgroundThread`` that delivers a batch, then at
/// once again after a full one or after the poll interval (sooner when woken: the store's
/// doorbell). One place for that life, so the workers differ only in how they deliver; its claim
/// and the recording of outcomes are here too (``LeaseQueue``).
public final class QueueWorkerThread: Sendable {
    /// The lease owner the worker claims as (`PREFIX-pid-random`).
    public let owner: String
    /// The worker's heartbeat, and the taking back of dead daemons' claims.
    public let heartbeat: HeartbeatLoop
    private let thread: BackgroundThread
    /// Rows one claim takes (``claimDue(from:policy:now:)``); a full batch is claimed again at once.
    let batchSize: Int
    private let pollInterval: Duration
    /// The queue's store and the worker's logger, for the claim and the outcomes (`LeaseQueue.swift`).
    let store: any Store
    let logger: Logger

    /// A thread named `name` (not started) whose owner starts with `prefix`.
    public init(
        name: String, prefix: String, store: any Store, batchSize: Int, pollInterval: Duration, clock: any WallClock,
        monotonic: any MonotonicClock, liveness: LivenessPolicy, reclaims: ReclaimMetrics, logger: Logger
    ) {
        let owner = "\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        self.owner = owner
        self.batchSize = batchSize
        self.pollInterval = pollInterval
        self.store = store
        self.logger = logger
        thread = BackgroundThread(name: name, clock: monotonic)
        heartbeat = HeartbeatLoop(
            owner: owner, store: store, policy: liveness, clock: clock, monotonic: monotonic, metrics: reclaims, logger: logger)
    }

    /// Starts the heartbeat (its first beat at once), then the thread: `prepare` runs once on it
    /// (making the transport; nil stops the thread), then `deliver` with what it made, again and
    /// again, each returning how many it claimed. Does nothing when started already.
    public func start<Transport>(
        prepare: @escaping @Sendable () -> Transport?, deliver: @escaping @Sendable (Transport) -> Int
    ) {
        heartbeat.start()
        let (batchSize, pollInterval) = (self.batchSize, self.pollInterval)
        thread.start { thread in
            guard let transport = prepare() else { return }
            while !thread.isStopping {
                // A full batch means more may be due: claim again at once.
                if deliver(transport) < batchSize, !thread.wait(for: pollInterval) { break }
            }
        }
    }

    /// Ends the current wait early (the store rang its doorbell).
    public func wake() { thread.wake() }

    /// Asks the thread to stop and waits until it has (a batch in progress is finished first),
    /// then removes the heartbeat. Does nothing when it never started.
    public func stop() {
        thread.stop()
        heartbeat.stop()
    }
}

/// A transport made and used on the worker's own thread only (it is not `Sendable`): carried to
/// the delivery closure of that same thread.
struct UncheckedTransport<Transport>: @unchecked Sendable {
    let transport: Transport
    init(_ transport: Transport) { self.transport = transport }
}
