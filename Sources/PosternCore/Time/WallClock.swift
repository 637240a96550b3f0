import Foundation
import Synchronization

/// The source of "now" for everything with an expiry, injected so tests never sleep.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

extension WallClock {
    /// The current time in whole seconds since 1970, as codes and rows store it.
    public func unixSeconds() -> Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    /// Creates the clock.
    public init() {}
    /// The current time.
    public func now() -> Date { Date() }
}

/// A clock that moves only when told to: for tests of expiry.
public final class ManualClock: WallClock {
    private let current: Mutex<Date>

    /// Starts at `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    /// The time the clock was last set to.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
