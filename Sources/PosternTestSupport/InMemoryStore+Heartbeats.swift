import PosternCore

extension InMemoryStore.Transaction {
    public func daemonHeartbeats() throws -> [DaemonHeartbeat] {
        state.heartbeats.values.sorted { $0.owner < $1.owner }
    }

    public func beat(_ heartbeat: DaemonHeartbeat) throws { state.heartbeats[heartbeat.owner] = heartbeat }

    public func removeHeartbeat(owner: String) throws -> Bool { state.heartbeats.removeValue(forKey: owner) != nil }

    public func reclaimClaims(of dead: DaemonHeartbeat, now: Int64) throws -> ReclaimedClaims {
        guard state.heartbeats[dead.owner] == dead else { return ReclaimedClaims() }
        state.heartbeats[dead.owner] = nil
        var reclaimed = ReclaimedClaims(owners: 1)
        reclaimed.messages = InMemoryLeaseQueue.reclaim(&state.outbox, of: dead, now: now)
        reclaimed.webhooks = InMemoryLeaseQueue.reclaim(&state.webhooks, of: dead, now: now)
        reclaimed.sms = InMemoryLeaseQueue.reclaim(&state.sms, of: dead, now: now)
        if reclaimed.messages > 0 || reclaimed.sms > 0 { queuedMail = true }
        return reclaimed
    }
}
