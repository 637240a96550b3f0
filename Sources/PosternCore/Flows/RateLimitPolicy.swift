/// The per-address mail limits, as pure arithmetic over the times of earlier events: at most one
/// event per `interval` seconds and `perHour` in any hour. The same for every address, existing
/// or not.
public enum RateLimitPolicy {
    /// Seconds until another event is allowed, or nil when it is allowed now.
    public static func retryAfter(eventTimes: [Int64], now: Int64, interval: Int64, perHour: Int64) -> Int64? {
        let recent = eventTimes.filter { $0 > now - 3600 }.sorted()
        var wait: Int64 = 0
        if interval > 0, let last = recent.last, now - last < interval {
            wait = max(wait, interval - (now - last))
        }
        if perHour > 0, recent.count >= perHour {
            // The oldest event that must leave the window before one more fits.
            let blocking = recent[recent.count - Int(perHour)]
            wait = max(wait, blocking + 3600 - now)
        }
        return wait > 0 ? wait : nil
    }
}
