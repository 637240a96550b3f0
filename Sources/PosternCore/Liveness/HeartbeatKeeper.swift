/// One daemon's heartbeat in the store, and the taking back of dead daemons' claims: what a
/// ``beat(now:)`` does, over the `Store` protocol and an injected process probe, so it is tested
/// on a manual clock against every store. The daemon's thread that calls it every
/// ``LivenessPolicy/interval`` lives with the workers (`HeartbeatLoop` in PosternMail).
///
/// A beat reads every heartbeat, lets the ``LivenessPolicy`` judge them, then in one write
/// refreshes this daemon's row and, for each dead daemon, removes its row and ends its claims'
/// leases now (``HeartbeatWriter/reclaimClaims(of:now:)``): they are then exactly what an
/// expired lease is, and the next claim of any worker takes them. The attempt a dead daemon may
/// have had in flight is not counted and is made again: at least once.
public struct HeartbeatKeeper: Sendable {
    /// This daemon's row (its `beatAt` is replaced at each beat).
    public let identity: DaemonHeartbeat
    private let store: any Store
    private let policy: LivenessPolicy
    private let localProcess: (@Sendable (Int32) -> LocalProcess)?
    private let metrics: ReclaimMetrics

    /// A keeper for the daemon `identity` on `store`. `localProcess` probes pids on this machine;
    /// pass it only for a store no other machine opens (``Store/isConfinedToThisMachine``).
    public init(
        identity: DaemonHeartbeat, store: any Store, policy: LivenessPolicy = .standard,
        localProcess: (@Sendable (Int32) -> LocalProcess)?, metrics: ReclaimMetrics = ReclaimMetrics()
    ) {
        self.identity = identity
        self.store = store
        self.policy = policy
        self.localProcess = localProcess
        self.metrics = metrics
    }

    /// Writes this daemon's heartbeat at `now` and takes back the claims of the daemons dead at
    /// `now`; returns what it took back (also added to the metrics).
    /// - Throws: the store's errors (the next beat tries again).
    @discardableResult
    public func beat(now: Int64) throws -> ReclaimedClaims {
        let beats = try store.read { try $0.daemonHeartbeats() }
        let dead = policy.dead(
            among: beats, me: identity.owner, now: now, host: identity.host, localProcess: localProcess)
        let mine = identity.beating(at: now)
        // A heartbeat lost in a crash costs nothing: the next one is two seconds away.
        let reclaimed = try store.writeSyncingLater { writer in
            try writer.beat(mine)
            var reclaimed = ReclaimedClaims()
            for beat in dead { reclaimed += try writer.reclaimClaims(of: beat, now: now) }
            return reclaimed
        }
        metrics.count(reclaimed)
        return reclaimed
    }

    /// Removes this daemon's heartbeat: a graceful stop, after its workers gave their claims back.
    /// - Throws: the store's errors (the row then looks dead after the allowed silence).
    public func remove() throws {
        let owner = identity.owner
        _ = try store.write { try $0.removeHeartbeat(owner: owner) }
    }
}
