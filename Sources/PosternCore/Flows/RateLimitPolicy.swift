/// The per-address mail limits, as pure arithmetic over the times of earlier events: at most one
/// event per `interval` seconds and `perHour` in any hour. The same for every address, existing
/// or not.
public enum RateLimitPolicy {
    /// The rolling window `perHour` counts in, in seconds: an event at or before `now - window`
    /// no longer counts (and may be deleted).
    public static let window: Int64 = 3600

    /// Seconds until another event is allowed, or nil when it is allowed now.
    public static func retryAfter(eventTimes: [Int64], now: Int64, interval: Int64, perHour: Int64) -> Int64? {
        let recent = eventTimes.filter { $0 > now - window }.sorted()
        var wait: Int64 = 0
        if interval > 0, let last = recent.last, now - last < interval {
            wait = max(wait, interval - (now - last))
        }
        if perHour > 0, recent.count >= perHour {
            // The oldest event that must leave the window before one more fits.
            let blocking = recent[recent.count - Int(perHour)]
            wait = max(wait, blocking + window - now)
        }
        return wait > 0 ? wait : nil
    }
}

/// The per-client-IP limit (`--ip-per-minute`) as a generic cell rate algorithm: one number per
/// client, the theoretical arrival time (`tat`, milliseconds), so that a check is one atomic
/// upsert of one row in the database every daemon shares. `perMinute` requests a minute, in a
/// burst of up to `perMinute` after a quiet minute — the token bucket the daemon kept in memory,
/// in one column. The admin token's guess budget (``AdminTokenBudget``) is the same arithmetic
/// over a longer window: `allowed` in a burst, then one each `window / allowed`.
///
/// A request at `now` is allowed when `max(tat, now) + step <= now + window` (`step`: window /
/// allowed ms; `window`: 60,000 ms for `--ip-per-minute`), and then moves `tat` to
/// `max(tat, now) + step`; a refused request leaves it. A row whose `tat` is at or before now
/// says nothing (a full bucket) and may be deleted, whatever its window.
public enum ClientRatePolicy {
    /// The window the per-minute limit counts in, in milliseconds.
    public static let window: Int64 = 60_000

    /// Milliseconds one request uses up of the window.
    public static func step(perMinute: Int64) -> Int64 { step(allowed: perMinute, window: window) }

    /// Ticks one request uses up of `window` (in ticks) when `allowed` fit in it: at least one, so
    /// a limit is counted exactly up to one request a tick (``ClientLimit`` counts in
    /// microseconds: up to a million a second per client).
    public static func step(allowed: Int64, window: Int64) -> Int64 { max(1, window / max(1, allowed)) }

    /// The decision for a request at `now` (ms) against the stored `tat` (nil: no row): the new
    /// `tat` when allowed, else the whole seconds to wait.
    public static func decide(tat: Int64?, now: Int64, perMinute: Int64) -> (tat: Int64?, retryAfter: Int64?) {
        decide(tat: tat, now: now, allowed: perMinute, window: window)
    }

    /// ``decide(tat:now:perMinute:)`` with `allowed` requests in `window`, times in ticks of which
    /// `ticksPerSecond` make a second (milliseconds unless said).
    public static func decide(
        tat: Int64?, now: Int64, allowed: Int64, window: Int64, ticksPerSecond: Int64 = 1_000
    ) -> (tat: Int64?, retryAfter: Int64?) {
        let grant = take(tat: tat, now: now, allowed: allowed, window: window, upTo: 1)
        if grant.granted > 0 { return (grant.tat, nil) }
        return (nil, retryAfter(tat: grant.tat, now: now, allowed: allowed, window: window, ticksPerSecond: ticksPerSecond))
    }

    /// Up to `count` requests taken at once (a lease of ``ClientLimit``): as many as fit, each
    /// moving `tat` one step, so taking k is k requests one after the other at `now`. The new
    /// `tat` (`max(tat, now)` when none fit: the stored one, or a full bucket's).
    public static func take(tat: Int64?, now: Int64, allowed: Int64, window: Int64, upTo count: Int64) -> ClientTokenGrant {
        let step = step(allowed: allowed, window: window)
        let start = max(tat ?? now, now)
        let granted = min(max(0, count), max(0, (now + window - start) / step))
        return ClientTokenGrant(granted: granted, tat: start + granted * step)
    }

    /// Whole seconds (at least 1) until a refused client's next request fits, from its `tat`.
    public static func retryAfter(tat: Int64, now: Int64, perMinute: Int64) -> Int64 {
        retryAfter(tat: tat, now: now, allowed: perMinute, window: window)
    }

    /// ``retryAfter(tat:now:perMinute:)`` with `allowed` requests in `window`, times in ticks of
    /// which `ticksPerSecond` make a second.
    public static func retryAfter(tat: Int64, now: Int64, allowed: Int64, window: Int64, ticksPerSecond: Int64 = 1_000) -> Int64 {
        let ticks = tat + step(allowed: allowed, window: window) - now - window
        return max(1, (ticks + ticksPerSecond - 1) / ticksPerSecond)
    }
}

/// What a take of a client's budget came to (``ClientRatePolicy/take(tat:now:allowed:window:upTo:)``,
/// ``LimitWriter/takeClientTokens(bucket:now:allowed:window:upTo:)``).
public struct ClientTokenGrant: Sendable, Equatable {
    /// Requests granted, 0 to the count asked for.
    public var granted: Int64
    /// The bucket's `tat` after the take.
    public var tat: Int64

    public init(granted: Int64, tat: Int64) {
        self.granted = granted
        self.tat = tat
    }
}
