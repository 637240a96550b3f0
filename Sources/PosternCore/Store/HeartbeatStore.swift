/// Heartbeat reads, part of every `StoreReader`.
public protocol HeartbeatReader {
    /// Every daemon's heartbeat, by owner.
    func daemonHeartbeats() throws -> [DaemonHeartbeat]
}

/// Heartbeat changes, part of every `StoreWriter`: each daemon's row, and taking back the claims
/// of a daemon that stopped beating (``HeartbeatKeeper``).
public protocol HeartbeatWriter: HeartbeatReader {
    /// Writes `heartbeat` (inserted, or replacing the row of its owner).
    func beat(_ heartbeat: DaemonHeartbeat) throws
    /// Removes `owner`'s heartbeat; false when it had none.
    func removeHeartbeat(owner: String) throws -> Bool
    /// Takes back the claims of `dead`'s daemon, if its row is still exactly `dead` (not beaten
    /// since it was judged, nor removed): removes the row and ends, at `now`, the leases of the
    /// outbox messages and webhook deliveries it holds (``DaemonHeartbeat/ownsLease(_:)``) that
    /// had not ended yet — their state, attempts and owner unchanged, so they are what an expired
    /// lease is and the next claim takes them; each due again from its `createdAt`, so that the
    /// claims (ordered by due time) take them before mail queued since (the dead daemon's claims
    /// are the oldest mail, and must not wait behind a backlog). Counts nothing when the row changed.
    func reclaimClaims(of dead: DaemonHeartbeat, now: Int64) throws -> ReclaimedClaims
}
