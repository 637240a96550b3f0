import Synchronization

/// Rows housekeeping removed so far, per kind, for `/metrics`
/// (`postern_housekeeping_rows_removed_total{table=…}`). Counts only.
public final class HousekeepingMetrics: Sendable {
    private let removed = Mutex<[ExpiringRows: Int]>([:])

    /// Creates empty counters.
    public init() {}

    /// Adds a round's removals.
    func count(_ round: HousekeepingRound) {
        removed.withLock { totals in
            for (rows, count) in round.removed where count > 0 { totals[rows, default: 0] += count }
        }
    }

    /// Every kind with its total so far (0 for those nothing was removed of), in ``ExpiringRows``' order.
    public func snapshot() -> [(rows: ExpiringRows, count: Int)] {
        let totals = removed.withLock { $0 }
        return ExpiringRows.allCases.map { ($0, totals[$0] ?? 0) }
    }
}
