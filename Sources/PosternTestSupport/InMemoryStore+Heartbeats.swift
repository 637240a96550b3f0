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
        for index in state.outbox.indices {
            let row = state.outbox[index]
            guard row.state == .claimed, row.nextAttemptAt > now, let owner = row.leaseOwner, dead.ownsLease(owner) else { continue }
            state.outbox[index].nextAttemptAt = now
            reclaimed.messages += 1
        }
        for index in state.webhooks.indices {
            let row = state.webhooks[index]
            guard row.state == .claimed, row.nextAttemptAt > now, let owner = row.leaseOwner, dead.ownsLease(owner) else { continue }
            state.webhooks[index].nextAttemptAt = now
            reclaimed.webhooks += 1
        }
        for index in state.sms.indices {
            let row = state.sms[index]
            guard row.state == .claimed, row.nextAttemptAt > now, let owner = row.leaseOwner, dead.ownsLease(owner) else { continue }
            state.sms[index].nextAttemptAt = now
            reclaimed.sms += 1
        }
        if reclaimed.messages > 0 || reclaimed.sms > 0 { queuedMail = true }
        return reclaimed
    }
}
