/// How patiently the outbox retries: exponential backoff with jitter, a lease, a deadline.
public struct DeliveryPolicy: Sendable, Hashable {
    /// The delay after the first failed attempt, in seconds (30); doubled after each further one.
    public var baseDelay: Int64
    /// The longest delay between two attempts, in seconds (1 hour).
    public var maximumDelay: Int64
    /// How long after queuing a message is abandoned, in seconds (24 hours), unless its own
    /// `giveUpAt` (the link's expiry) comes first.
    public var maximumAge: Int64
    /// How long a claim holds a message, in seconds (150); a worker that dies loses it after this,
    /// or sooner: once its daemon's heartbeat stops (``HeartbeatKeeper``).
    /// A busy worker renews it once half is used, so one send may take up to half of it
    /// (the SMTP transport gives up after 60 s).
    public var lease: Int64

    /// The policy; the defaults are the production values.
    public init(baseDelay: Int64 = 30, maximumDelay: Int64 = 3_600, maximumAge: Int64 = 86_400, lease: Int64 = 150) {
        self.baseDelay = max(1, baseDelay)
        self.maximumDelay = max(self.baseDelay, maximumDelay)
        self.maximumAge = maximumAge
        self.lease = max(1, lease)
    }

    /// The production policy.
    public static let standard = DeliveryPolicy()

    /// The wait after `failedAttempts` failed attempts (1 for the first failure).
    ///
    /// `baseDelay · 2^(n−1)`, capped at `maximumDelay`, then shortened by up to a quarter by
    /// `jitter` (a random number in 0..<1) so messages that failed together do not retry together.
    public func delay(afterFailedAttempts failedAttempts: Int, jitter: Double) -> Int64 {
        let exponent = min(max(failedAttempts, 1) - 1, 40)
        let (doubled, overflow) = baseDelay.multipliedReportingOverflow(by: Int64(1) << Int64(exponent))
        let capped = overflow ? maximumDelay : min(doubled, maximumDelay)
        let fraction = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        let shortened = Int64((Double(capped) * fraction / 4).rounded(.down))
        return max(1, capped - shortened)
    }

    /// When a message queued at `createdAt` with `giveUpAt` is abandoned.
    public func deadline(createdAt: Int64, giveUpAt: Int64) -> Int64 {
        min(giveUpAt, createdAt.addingReportingOverflow(maximumAge).overflow ? Int64.max : createdAt + maximumAge)
    }
}
