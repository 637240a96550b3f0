import Foundation
import PosternCore

/// The daemon's housekeeping: a thread that runs a ``Housekeeper`` round every `interval`, logs
/// each round that removed anything (counts per table, nothing else), and stops when asked —
/// between two batches, so a SIGTERM never waits for a whole round.
///
/// The thread and its interval are a ``BackgroundThread`` (on an injected monotonic clock, so tests
/// move a manual clock instead of sleeping).
///
/// `@unchecked Sendable`: `rounds` is only touched with `counter` locked.
public final class HousekeepingLoop: @unchecked Sendable {
    /// Seconds between two rounds by default.
    public static let defaultInterval: Duration = .seconds(60)

    /// The round it runs (and its metrics).
    public let housekeeper: Housekeeper
    private let interval: Duration
    private let logger: Logger
    private let thread: BackgroundThread
    private let counter = NSLock()
    // `counter` guards `rounds`.
    private var rounds = 0

    /// A loop that is not started yet.
    public init(
        housekeeper: Housekeeper, interval: Duration = HousekeepingLoop.defaultInterval,
        clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger
    ) {
        self.housekeeper = housekeeper
        self.interval = interval
        self.logger = logger
        thread = BackgroundThread(name: "housekeeping", clock: clock)
    }

    /// Rounds finished so far (for tests).
    public var roundsRun: Int { counter.withLock { rounds } }

    /// Starts the thread; the first round runs one interval after. Does nothing when started already.
    public func start() { thread.start { [self] thread in run(thread) } }

    /// Asks the loop to stop and waits until it has: a round in progress ends after its current
    /// batch. Does nothing when it never started.
    public func stop() { thread.stop() }

    private func run(_ thread: BackgroundThread) {
        while thread.wait(for: interval) {
            do {
                let round = try housekeeper.runRound(isCancelled: { thread.isStopping })
                if round.settledTransfers > 0 {
                    logger.info("housekeeping moved phone numbers whose transfer cool-off was over", ["claims": String(round.settledTransfers)])
                }
                if round.unsettledTransfers > 0 {
                    logger.warning("housekeeping could not settle phone transfers that are due; the next round tries again",
                                   ["claims": String(round.unsettledTransfers)])
                }
                if round.total > 0 {
                    var fields = Dictionary(uniqueKeysWithValues: round.removed.map { ($0.key.rawValue, String($0.value)) })
                    fields["unfinished"] = String(round.unfinished)
                    logger.info("housekeeping removed expired rows", fields)
                }
            } catch {
                // StoreError descriptions name tables and states, never values.
                logger.warning("housekeeping round failed", ["error": "\(error)"])
            }
            counter.withLock { rounds += 1 }
        }
    }
}
