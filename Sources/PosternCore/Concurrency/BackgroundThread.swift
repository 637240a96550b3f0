import Foundation

/// One named thread that runs a body until asked to stop, with the waits such a body needs: the
/// lifecycle the daemon's periodic workers share (housekeeping, webhook delivery). `stop()`
/// returns once the body has returned; the body sees the request through `isStopping` and through
/// `wait(for:)`, which ends early when it comes.
///
/// Intervals are measured on an injected ``MonotonicClock``, so a stepped wall clock neither runs
/// rounds back to back nor skips them, and tests move a manual clock instead of sleeping.
///
/// `@unchecked Sendable`: `state` is only touched with `condition` locked.
public final class BackgroundThread: @unchecked Sendable {
    private let name: String
    private let clock: any MonotonicClock
    private let condition = NSCondition()
    private enum State { case idle, running, stopping, stopped }
    private var state = State.idle
    /// Set by ``wake()``, cleared by the wait it ends.
    private var woken = false

    /// A thread named `name` (not started), timing its waits on `clock`.
    public init(name: String, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.name = name
        self.clock = clock
    }

    /// Starts `body` on the thread. Does nothing when started already.
    public func start(_ body: @escaping @Sendable (BackgroundThread) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        guard state == .idle else { return }
        state = .running
        Thread.start(named: name) { [self] in
            body(self)
            condition.lock()
            state = .stopped
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Asks the body to stop and waits until it has returned. Does nothing when never started.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .running else { return }
        state = .stopping
        condition.broadcast()
        while state != .stopped { condition.wait() }
    }

    /// Whether `start(_:)` was called.
    public var isStarted: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state != .idle
    }

    /// Whether `stop()` was called.
    public var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state == .stopping || state == .stopped
    }

    /// Ends the body's current (or next) ``wait(for:)`` early, as if its interval had passed: a
    /// doorbell (the store's, after a commit that queued work). Returns at once.
    public func wake() {
        condition.lock()
        woken = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits `interval` on the clock (less when ``wake()`` is called); false (at once) when the thread is to stop instead.
    public func wait(for interval: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = clock.now() + interval
        while state == .running {
            if woken {
                woken = false
                return true
            }
            if !clock.wait(on: condition, until: deadline) || clock.now() >= deadline { return state == .running }
        }
        return false
    }
}
