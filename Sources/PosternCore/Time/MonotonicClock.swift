import Foundation

/// The source of "how long since" for intervals and timed waits, injected so tests never sleep.
///
/// Separate from ``WallClock`` on purpose: a wall clock is stepped (NTP, an operator), and an
/// interval measured on it then stretches or goes negative — a commit left unflushed, a worker
/// that polls at once or never. This clock never goes back. It also owns the timed wait, so that
/// ``ManualMonotonicClock`` can wake a waiter the moment a test moves it, instead of the test
/// sleeping until a real deadline passes.
public protocol MonotonicClock: Sendable {
    /// The time since an origin fixed for the life of the process (the same for every instance).
    func now() -> Duration

    /// Waits on `condition`, which the caller holds locked, until it is signalled or this clock
    /// reaches `deadline` (nil: no deadline). Returns false when the deadline has passed. Like any
    /// condition wait it may return early: callers check their predicate again.
    func wait(on condition: NSCondition, until deadline: Duration?) -> Bool
}

/// The system's monotonic clock (`ContinuousClock`).
public struct SystemMonotonicClock: MonotonicClock {
    /// One origin for the process, so instants from different instances compare.
    private static let origin = ContinuousClock.now

    /// Creates the clock.
    public init() {}

    /// The time since the process's origin.
    public func now() -> Duration { ContinuousClock.now - Self.origin }

    /// Waits with `NSCondition`'s timed wait for what is left until `deadline`: that wait is on
    /// the wall clock, so a step during it only ends it early or late once; callers measure again
    /// on this clock.
    public func wait(on condition: NSCondition, until deadline: Duration?) -> Bool {
        guard let deadline else {
            condition.wait()
            return true
        }
        let left = deadline - now()
        guard left > .zero else { return false }
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        return condition.wait(until: Date(timeIntervalSinceNow: seconds))
    }
}
