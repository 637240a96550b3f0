import Synchronization

/// What the webhook worker did with its attempts since the daemon started, for `/metrics`
/// (`postern_webhook_attempts_total{outcome=…}`).
public final class WebhookMetrics: Sendable {
    /// The outcomes counted, as the `outcome` label names them.
    public enum Outcome: String, Sendable, CaseIterable {
        /// A 2xx.
        case delivered
        /// A failed attempt that will be retried (another status, a timeout, no connection).
        case failed
        /// Given up on: out of time, the endpoint removed, or disabled.
        case abandoned
        /// A 410 Gone disabled the endpoint.
        case disabled
    }

    private let counts = Mutex([Outcome: Int]())

    public init() {}

    public func count(_ outcome: Outcome) { counts.withLock { $0[outcome, default: 0] += 1 } }

    /// Every outcome's count, in `Outcome.allCases` order.
    public func snapshot() -> [(outcome: Outcome, count: Int)] {
        let current = counts.withLock { $0 }
        return Outcome.allCases.map { ($0, current[$0] ?? 0) }
    }
}
