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
