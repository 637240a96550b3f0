import Foundation
import PosternCore
import Synchronization

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
