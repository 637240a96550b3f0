import Synchronization

/// A token bucket per client IP, in memory (per process): `perMinute` requests a minute with
/// bursts up to the same number. Answers the same for every request shape, so it reveals nothing.
public final class IPRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    private let perMinute: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    /// `perMinute` 0 switches the limit off.
    public init(perMinute: Int64) { self.perMinute = Double(perMinute) }

    /// Takes one token for `ip` at `now` (seconds); nil when allowed, else seconds to wait.
    public func take(ip: String, now: Double) -> Int64? {
        guard perMinute > 0 else { return nil }
        return buckets.withLock { buckets in
            if buckets.count > 100_000 {
                // Forget full buckets so memory stays bounded under a scan of many addresses.
                buckets = buckets.filter { now - $0.value.updatedAt < 60 }
            }
            var bucket = buckets[ip] ?? Bucket(tokens: perMinute, updatedAt: now)
            bucket.tokens = min(perMinute, bucket.tokens + (now - bucket.updatedAt) * perMinute / 60)
            bucket.updatedAt = now
            defer { buckets[ip] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return Int64(((1 - bucket.tokens) * 60 / perMinute).rounded(.up))
        }
    }
}
