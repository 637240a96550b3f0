/// Deletes what can no longer matter (``RetentionPolicy``), in small transactions, so that the
/// database stays bounded: the one round both the daemon's loop and `postern maintenance run`
/// run.
///
/// Each batch is its own write of at most ``batchSize`` rows of one kind (``Store/writeSyncingLater(_:)``:
/// a delete a crash loses is made again by the next round), so a round never holds
/// the writer (SQLite) or many row locks (PostgreSQL) for longer than a batch, and requests
/// interleave with it; on PostgreSQL the batches are small enough for autovacuum to keep up. A
/// kind is deleted until a batch comes back short, or ``maximumBatches`` ran (the next round goes
/// on). Among daemons sharing a database one runs a round at a time (``StoreLock/housekeeping``);
/// the others skip it. After a round that removed rows the store gets back up to
/// ``reclaimPages`` free pages (SQLite's incremental vacuum).
///
/// The horizons are taken once per round, from the injected clock: a row the round keeps stays
/// until the next round, whatever the round's length.
public struct Housekeeper: Sendable {
    /// Rows per transaction.
    public static let defaultBatchSize = 500

    let store: any Store
    let policy: RetentionPolicy
    let clock: any WallClock
    /// Rows deleted per transaction.
    public let batchSize: Int
    /// Batches of one kind per round at most.
    public let maximumBatches: Int
    /// Free pages given back after a round that removed rows (4 KiB each: 16 MiB).
    public let reclaimPages: Int
    /// Where the removals are counted.
    public let metrics: HousekeepingMetrics
    /// What is due to change before anything is deleted, run first in each round (the daemon's:
    /// ``PhoneSettlement/settleDueTransfers(limit:)``, which needs the keys and settings the
    /// store alone has not): how many it settled, how many it could not.
    public typealias SettleDue = @Sendable () throws -> (moved: Int, failed: Int)
    /// The round's ``SettleDue``; nil for none (`maintenance run`).
    let settleDue: SettleDue?

    /// Creates the housekeeper.
    public init(
        store: any Store, policy: RetentionPolicy, clock: any WallClock, batchSize: Int = Housekeeper.defaultBatchSize,
        maximumBatches: Int = 200, reclaimPages: Int = 4096, metrics: HousekeepingMetrics = HousekeepingMetrics(),
        settleDue: SettleDue? = nil
    ) {
        self.settleDue = settleDue
        self.store = store
        self.policy = policy
        self.clock = clock
        self.batchSize = max(1, batchSize)
        self.maximumBatches = max(1, maximumBatches)
        self.reclaimPages = max(0, reclaimPages)
        self.metrics = metrics
    }

    /// Runs one round now: every kind of row, batch by batch, then the vacuum. `isCancelled` is
    /// asked before each batch: a daemon that is stopping ends the round there (`unfinished`).
    /// - Throws: `StoreError` when the store fails (what earlier batches removed stays removed
    ///   and counted), or what `settleDue` threw, once the deletes have run.
    public func runRound(isCancelled: () -> Bool = { false }) throws -> HousekeepingRound {
        let now = clock.unixSeconds()
        var round = HousekeepingRound()
        var settleFailure: (any Error)?
        let ran: Void? = try store.exclusively(.housekeeping) {
            defer { metrics.count(round) }
            // A failure to settle does not keep the deletes from running; it is thrown after them.
            if let settleDue, !isCancelled() {
                do { (round.settledTransfers, round.unsettledTransfers) = try settleDue() } catch { settleFailure = error }
            }
            for rows in ExpiringRows.allCases {
                let horizon = policy.horizon(for: rows, now: now)
                for batch in 1...maximumBatches {
                    if isCancelled() {
                        round.unfinished = true
                        break
                    }
                    // A delete lost in a crash is made again by the next round: it may skip its fsync.
                    let removed = try store.writeSyncingLater { [batchSize] tx in
                        try Self.prune(rows, horizon: horizon, limit: batchSize, tx)
                    }
                    round.removed[rows, default: 0] += removed
                    if removed < batchSize { break }
                    if batch == maximumBatches { round.unfinished = true }
                }
            }
            if round.total > 0 && reclaimPages > 0 && !isCancelled() {
                try store.writeSyncingLater { [reclaimPages] tx in try tx.reclaimFreePages(reclaimPages) }
            }
        }
        if ran == nil { round.skipped = true }
        if let settleFailure { throw settleFailure }
        return round
    }

    /// One batch of `rows`: the store's delete for that kind.
    static func prune(_ rows: ExpiringRows, horizon: Int64, limit: Int, _ tx: any StoreWriter) throws -> Int {
        switch rows {
        case .actionRequests: try tx.pruneActionRequests(expiredBy: horizon, limit: limit)
        case .consumedCodes: try tx.pruneConsumedCodes(now: horizon, limit: limit)
        case .refreshTokens: try tx.pruneRefreshTokens(expiredBy: horizon, limit: limit)
        case .sessions: try tx.pruneDeviceSessions(expiredBy: horizon, limit: limit)
        case .accountActivity: try tx.pruneActivity(olderThan: horizon, limit: limit)
        // The outbox's delete takes "finished before": one past the horizon keeps "at or before".
        case .outbox: try tx.purgeFinished(.mail, before: horizon + 1, limit: limit)
        case .rateEvents: try tx.pruneRateEvents(atOrBefore: horizon, limit: limit)
        case .rateWindows: try tx.pruneRateWindows(startedBy: horizon, limit: limit)
        case .guessBudgets: try tx.pruneGuessRecords(lastFailureBy: horizon, limit: limit)
        case .webhookDeliveries: try tx.purgeFinished(.webhooks, before: horizon + 1, limit: limit)
        // The bucket's time is in milliseconds: full at or before the horizon's second.
        case .clientRate: try tx.pruneClientBuckets(fullBy: horizon * 1_000_000, limit: limit)  // ClientLimit counts in microseconds
        case .outboxAttempts: try tx.purgeOutboxAttempts(before: horizon + 1, limit: limit)
        case .smsOutbox: try tx.purgeFinished(.sms, before: horizon + 1, limit: limit)
        case .phoneClaims: try tx.prunePhoneClaims(expiredBy: horizon, limit: limit)
        case .phoneSignIns: try tx.prunePhoneSignIns(expiredBy: horizon, limit: limit)
        case .oidcCodes: try tx.pruneAuthorizationCodes(expiredBy: horizon, limit: limit)
        case .oidcRequests: try tx.pruneOIDCPendingRequests(expiredBy: horizon, limit: limit)
        case .oidcBrowserSessions: try tx.pruneOIDCBrowserSessions(expiredBy: horizon, limit: limit)
        case .providerTokenUses: try tx.pruneProviderTokenUses(expiredBy: horizon, limit: limit)
        }
    }
}
