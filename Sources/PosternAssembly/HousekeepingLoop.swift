import Foundation
import PosternCore

/// The daemon's housekeeping: a thread that runs a ``Housekeeper`` round every `interval`, logs
/// each round that removed anything (counts per table, nothing else), and stops when asked —
/// between two batches, so a SIGTERM never waits for a whole round.
///
/// The interval is measured on an injected ``MonotonicClock``, so a stepped wall clock neither
/// runs rounds back to back nor skips them, and tests move a manual clock instead of sleeping.
///
/// `@unchecked Sendable`: `state` and `thread` are only touched with `condition` locked.
public final class HousekeepingLoop: @unchecked Sendable {
    /// Seconds between two rounds by default.
    public static let defaultInterval: Duration = .seconds(60)

    /// The round it runs (and its metrics).
    public let housekeeper: Housekeeper
    private let interval: Duration
    private let clock: any MonotonicClock
    private let logger: Logger
    private let condition = NSCondition()
    private enum State { case idle, running, stopping, stopped }
    private var state = State.idle
    private var rounds = 0

    /// A loop that is not started yet.
    public init(
        housekeeper: Housekeeper, interval: Duration = HousekeepingLoop.defaultInterval,
        clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger
    ) {
        self.housekeeper = housekeeper
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    /// Rounds finished so far (for tests).
    public var roundsRun: Int {
        condition.lock()
        defer { condition.unlock() }
        return rounds
    }

    /// Starts the thread; the first round runs one interval after. Does nothing when started already.
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .idle else { return }
        state = .running
        let thread = Thread { [self] in run() }
        thread.name = "postern-housekeeping"
        thread.start()
    }

    /// Asks the loop to stop and waits until it has: a round in progress ends after its current
    /// batch. Does nothing when it never started.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .running else { return }
        state = .stopping
        condition.broadcast()
        while state != .stopped { condition.wait() }
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state != .running
    }

    private func run() {
        while waitForNextRound() {
            do {
                let round = try housekeeper.runRound(isCancelled: { isStopping })
                if round.total > 0 {
                    var fields = Dictionary(uniqueKeysWithValues: round.removed.map { ($0.key.rawValue, String($0.value)) })
                    fields["unfinished"] = String(round.unfinished)
                    logger.info("housekeeping removed expired rows", fields)
                }
            } catch {
                // StoreError descriptions name tables and states, never values.
                logger.warning("housekeeping round failed", ["error": "\(error)"])
            }
            condition.lock()
            rounds += 1
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        state = .stopped
        condition.broadcast()
        condition.unlock()
    }

    /// Waits one interval; false when the loop is to stop instead.
    private func waitForNextRound() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = clock.now() + interval
        while state == .running {
            if !clock.wait(on: condition, until: deadline) || clock.now() >= deadline { return state == .running }
        }
        return false
    }
}
