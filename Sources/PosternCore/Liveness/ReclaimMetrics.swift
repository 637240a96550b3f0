import Synchronization

/// Claims taken back from dead daemons so far, for `/metrics`
/// (`postern_reclaimed_claims_total{table=…}`). Counts only.
public final class ReclaimMetrics: Sendable {
    private let totals = Mutex(ReclaimedClaims())

    /// Creates empty counters.
    public init() {}

    /// Adds what one beat took back.
    public func count(_ reclaimed: ReclaimedClaims) {
        totals.withLock { $0 += reclaimed }
    }

    /// The totals so far.
    public func snapshot() -> ReclaimedClaims { totals.withLock { $0 } }
}
