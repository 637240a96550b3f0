/// What one housekeeping round did: the rows it removed per kind, or that it was skipped.
public struct HousekeepingRound: Sendable, Equatable {
    /// Rows removed, per kind (every kind present, 0 when none).
    public var removed: [ExpiringRows: Int]
    /// Another daemon sharing the database held the round (``StoreLock/housekeeping``): nothing ran.
    public var skipped: Bool
    /// Phone transfers whose cool-off was over, settled (moved) before the deletes.
    public var settledTransfers = 0
    /// Due phone transfers whose settling failed (each on its own; the next round tries again).
    public var unsettledTransfers = 0
    /// Whether a kind stopped at ``Housekeeper/maximumBatches`` with rows left (the next round goes on).
    public var unfinished: Bool

    /// A round that removed nothing.
    public init(skipped: Bool = false) {
        removed = Dictionary(uniqueKeysWithValues: ExpiringRows.allCases.map { ($0, 0) })
        self.skipped = skipped
        unfinished = false
    }

    /// All rows removed.
    public var total: Int { removed.values.reduce(0, +) }
}
