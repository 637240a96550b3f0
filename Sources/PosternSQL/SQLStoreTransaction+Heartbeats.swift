import PosternCore

extension SQLStoreTransaction {
    public func daemonHeartbeats() throws -> [DaemonHeartbeat] {
        var beats: [DaemonHeartbeat] = []
        try db.query("SELECT owner, host, pid, started_at, beat_at FROM daemon_heartbeats ORDER BY owner") { row in
            guard let owner = row.text(0), let host = row.text(1) else { throw StoreError.corrupt("heartbeat row") }
            beats.append(
                DaemonHeartbeat(
                    owner: owner, host: host, pid: Int32(truncatingIfNeeded: row.integer(2)), startedAt: row.integer(3),
                    beatAt: row.integer(4)))
        }
        return beats
    }

    public func beat(_ heartbeat: DaemonHeartbeat) throws {
        // One row, its own daemon's: row locks suffice (PostgreSQL: READ COMMITTED, no
        // serialization failure against the other daemons' beats).
        _ = try db.rowLocked {
            try db.execute(
                """
                INSERT INTO daemon_heartbeats (owner, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (owner) DO UPDATE SET host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
                    beat_at = excluded.beat_at
                """,
                [
                    .text(heartbeat.owner), .text(heartbeat.host), .integer(Int64(heartbeat.pid)), .integer(heartbeat.startedAt),
                    .integer(heartbeat.beatAt),
                ])
        }
    }

    public func removeHeartbeat(owner: String) throws -> Bool {
        try db.rowLocked { try db.execute("DELETE FROM daemon_heartbeats WHERE owner = ?", [.text(owner)]) == 1 }
    }

    public func reclaimClaims(of dead: DaemonHeartbeat, now: Int64) throws -> ReclaimedClaims {
        try db.rowLocked {
            // Compare and delete: a daemon that beat since it was judged keeps its row and claims
            // (the DELETE checks `beat_at` again on the row it locks).
            let removed = try db.execute(
                "DELETE FROM daemon_heartbeats WHERE owner = ? AND beat_at = ?", [.text(dead.owner), .integer(dead.beatAt)])
            guard removed == 1 else { return ReclaimedClaims() }
            // The owner itself (the webhook worker), or one of its workers (`owner:N`): a prefix
            // compared with substr, not LIKE, whose wildcards a host name could hold.
            let prefix = dead.owner + ":"
            let owned: [SQLValue] = [
                .integer(now), .integer(now), .text(dead.owner), .integer(Int64(prefix.unicodeScalars.count)), .text(prefix),
            ]
            let ownedCondition = "state = 'claimed' AND next_attempt_at > ? AND (lease_owner = ? OR substr(lease_owner, 1, ?) = ?)"
            let messages = try db.execute(
                "UPDATE outbox SET next_attempt_at = ? WHERE \(Self.unfinished) AND \(ownedCondition)", owned)
            let webhooks = try db.execute(
                "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE state NOT IN ('sent', 'dead') AND \(ownedCondition)", owned)
            let sms = try db.execute(
                "UPDATE sms_outbox SET next_attempt_at = ? WHERE state NOT IN ('sent', 'dead') AND \(ownedCondition)", owned)
            if messages > 0 || sms > 0 { queuedMail = true }
            return ReclaimedClaims(messages: messages, webhooks: webhooks, sms: sms, owners: 1)
        }
    }
}
