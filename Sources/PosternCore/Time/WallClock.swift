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
