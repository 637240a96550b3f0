import Foundation
import PosternCore

/// A monotonic clock that moves only when a test moves it, and wakes the threads waiting on it
/// when it does: timed behaviour (a flush after an interval, a poll) is tested without sleeping.
///
/// ``waitUntilSettled(waiters:wokenMoreThan:timeout:)`` is how a test knows a background thread
/// has acted on a move: it returns once that many threads wait on the clock and none of them is
/// past its deadline — each woke, did what was due and went back to waiting.
///
/// `@unchecked Sendable`: `current`, `waiters` and `nextToken` are only touched with `monitor`
/// locked.
public final class ManualMonotonicClock: MonotonicClock, @unchecked Sendable {
    private struct Waiter {
        let token: UInt64
        let condition: NSCondition
        let deadline: Duration?
    }

    private let monitor = NSCondition()
    private var current: Duration
    private var waiters: [Waiter] = []
    private var nextToken: UInt64 = 0
    private var wakeCount = 0

    /// Starts at `start` (an arbitrary origin).
    public init(_ start: Duration = .seconds(1_000)) { current = start }

    /// The time the clock was last moved to.
    public func now() -> Duration {
        monitor.lock()
        defer { monitor.unlock() }
        return current
    }

    /// Registers the caller, then waits on `condition` with no real timeout: only a signal or
    /// ``advance(by:)`` ends the wait. The check of the deadline and the registration happen under
    /// `monitor` in one step, and the caller holds `condition` until it waits, so a move between
    /// the two cannot be missed (``advance(by:)`` needs `condition` to broadcast).
    public func wait(on condition: NSCondition, until deadline: Duration?) -> Bool {
        monitor.lock()
        if let deadline, current >= deadline {
            monitor.unlock()
            return false
        }
        let token = nextToken
        nextToken &+= 1
        waiters.append(Waiter(token: token, condition: condition, deadline: deadline))
        monitor.broadcast()
        monitor.unlock()

        condition.wait()

        monitor.lock()
        waiters.removeAll { $0.token == token }
        wakeCount += 1
        let passed = deadline.map { current >= $0 } ?? false
        monitor.broadcast()
        monitor.unlock()
        return !passed
    }

    /// How many waits on this clock have ended so far (signalled, moved past, or spuriously): how
    /// often the threads waiting on it were woken.
    public var wakeUps: Int {
        monitor.lock()
        defer { monitor.unlock() }
        return wakeCount
    }

    /// Moves the clock forward by `interval` and wakes every waiter whose deadline it reached.
    public func advance(by interval: Duration) {
        monitor.lock()
        current += max(interval, .zero)
        let due = waiters.filter { waiter in waiter.deadline.map { current >= $0 } ?? false }.map(\.condition)
        monitor.broadcast()
        monitor.unlock()
        // Not under `monitor`: a waiter takes `monitor` while it holds its condition.
        for condition in due {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Blocks until at least `waiters` threads wait on this clock and none is past its deadline.
    /// Returns false if that did not happen within `timeout` real seconds (a hung test fails
    /// instead of hanging; the timeout is a guard, not a timing).
    ///
    /// With `wokenMoreThan` (a ``wakeUps`` read before the test acted), it also waits until more
    /// waits than that have ended: the threads woke after that moment and are waiting again. This
    /// is how a test proves that something did NOT happen: what the woken thread does before it
    /// waits again (commit a write it should have held, say) has happened by then if it happens at
    /// all, with no sleep standing in for "long enough".
    public func waitUntilSettled(waiters count: Int, wokenMoreThan wakeUps: Int? = nil, timeout: Double = 30) -> Bool {
        let limit = Date(timeIntervalSinceNow: timeout)
        monitor.lock()
        defer { monitor.unlock() }
        while !(waiters.count >= count && waiters.allSatisfy({ waiter in waiter.deadline.map { current < $0 } ?? true })
            && wakeCount > (wakeUps ?? Int.min))
        {
            if !monitor.wait(until: limit) { return false }
        }
        return true
    }
}
