import PosternCore

/// Daemons' heartbeats (``HeartbeatWriter``), and taking back a dead daemon's claims.
enum HeartbeatContract {
    static func heartbeat(_ owner: String, host: String = "box", pid: Int32 = 1, at: Int64) -> DaemonHeartbeat {
        DaemonHeartbeat(owner: owner, host: host, pid: pid, startedAt: 50, beatAt: at)
    }

    /// Queues `count` sign-in mails at `now`; returns their ids.
    static func enqueueWebhooks(_ store: any Store, _ count: Int) throws {
        try store.write { writer in
            for index in 0..<count {
                try writer.enqueueWebhook(
                    webhookID: "msg_\(index)", eventType: "user.created", body: "{}", endpoints: ["https://hooks.example/in"], now: 100,
                    giveUpAt: 10_000)
            }
        }
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("heartbeats", "a beat is written, replaced by the next, listed by owner, and removed") { store in
            try store.write { try $0.beat(heartbeat("b", at: 100)) }
            try store.write { try $0.beat(heartbeat("a", host: "other", pid: 9, at: 101)) }
            try store.write { try $0.beat(heartbeat("b", at: 102)) }
            try expectContract(
                try store.read { try $0.daemonHeartbeats() }, equals: [heartbeat("a", host: "other", pid: 9, at: 101), heartbeat("b", at: 102)],
                "heartbeats")
            try expectContract(try store.write { try $0.removeHeartbeat(owner: "b") }, "the first removal finds the row")
            try expectContract(try store.write { try $0.removeHeartbeat(owner: "b") } == false, "the second removal finds none")
            try expectContract(try store.read { try $0.daemonHeartbeats() }.map(\.owner), equals: ["a"], "owners left")
        },
        StoreContractCase("heartbeats", "taking back ends the leases of the dead daemon's workers and webhook claims only, keeps state and attempts, and removes its row") { store in
            let ids = try OutboxContract.enqueue(store, 6)
            try enqueueWebhooks(store, 2)
            // The dead daemon "box:1:5": two workers and its webhook claims; "box:1:55" (same prefix,
            // longer) lives.
            _ = try store.write { try $0.claimDue(.mail, owner: "box:1:5:0", now: 100, leaseUntil: 250, limit: 2) }
            _ = try store.write { try $0.claimDue(.mail, owner: "box:1:5:1", now: 100, leaseUntil: 250, limit: 1) }
            _ = try store.write { try $0.claimDue(.mail, owner: "box:1:55:0", now: 100, leaseUntil: 250, limit: 1) }
            try expectContract(try store.write { try $0.markRetry(.mail, id: ids[1], owner: "box:1:5:0", at: 100, reply: "451") })
            _ = try store.write { try $0.claimDue(.mail, owner: "box:1:5:0", now: 100, leaseUntil: 250, limit: 1) }
            try expectContract(try store.write { try $0.markSent(.mail, id: ids[0], owner: "box:1:5:0", now: 101, reply: "250") })
            _ = try store.write { try $0.claimDue(.webhooks, owner: "box:1:5", now: 100, leaseUntil: 250, limit: 1, claimable: DeliveryStateMachine.claimableStates) }
            _ = try store.write { try $0.claimDue(.webhooks, owner: "box:1:55", now: 100, leaseUntil: 250, limit: 1, claimable: DeliveryStateMachine.claimableStates) }
            let dead = heartbeat("box:1:5", at: 100)
            try store.write { try $0.beat(dead) }
            try store.write { try $0.beat(heartbeat("box:1:55", at: 100)) }

            let reclaimed = try store.write { try $0.reclaimClaims(of: dead, now: 110) }
            try expectContract(reclaimed == ReclaimedClaims(messages: 2, webhooks: 1, owners: 1))
            let messages = try store.read { try $0.outboxMessages(state: nil, limit: 10) }.sorted { $0.id < $1.id }
            try expectContract(messages.map(\.state) == [.sent, .claimed, .claimed, .claimed, .queued, .queued])
            // Due again from when they were queued (100), not from the reclaim (110).
            try expectContract(messages.map(\.nextAttemptAt) == [250, 100, 100, 250, 100, 100])
            try expectContract(messages[1].attempts == 1)
            let webhooks = try store.read { try $0.webhookDeliveries(state: .claimed, limit: 10) }.sorted { $0.id < $1.id }
            try expectContract(webhooks.map(\.nextAttemptAt) == [100, 250])
            try expectContract(try store.read { try $0.daemonHeartbeats() }.map(\.owner) == ["box:1:55"])

            // They are expired leases now: the next claim of a live worker takes them, the attempt
            // counted before kept, the one that may have been in flight made again.
            // First, before the mail queued as long ago as they were (ids 4 and 5 wait behind them).
            let first = try store.write { try $0.claimDue(.mail, owner: "box:1:55:0", now: 110, leaseUntil: 260, limit: 2) }
            try expectContract(first.map(\.message.id) == [ids[1], ids[2]])
            let taken = try first + store.write { try $0.claimDue(.mail, owner: "box:1:55:0", now: 110, leaseUntil: 260, limit: 10) }
            try expectContract(Set(taken.map(\.message.id)) == Set([ids[1], ids[2], ids[4], ids[5]]))
            try expectContract(try store.write { try $0.markSent(.mail, id: ids[1], owner: "box:1:5:0", now: 111, reply: "250") } == false)
            let takenHooks = try store.write {
                try $0.claimDue(.webhooks, owner: "box:1:55", now: 110, leaseUntil: 260, limit: 10, claimable: DeliveryStateMachine.claimableStates)
            }
            try expectContract(takenHooks.map(\.delivery.webhookID) == ["msg_0"])
        },
        StoreContractCase("heartbeats", "a daemon that beat again after it was judged keeps its row and its claims") { store in
            _ = try OutboxContract.enqueue(store, 1)
            _ = try store.write { try $0.claimDue(.mail, owner: "slow:0", now: 100, leaseUntil: 250, limit: 1) }
            let judged = heartbeat("slow", at: 100)
            try store.write { try $0.beat(judged) }
            try store.write { try $0.beat(heartbeat("slow", at: 108)) }
            try expectContract(try store.write { try $0.reclaimClaims(of: judged, now: 110) } == ReclaimedClaims())
            try expectContract(try store.read { try $0.outboxMessages(state: .claimed, limit: 1) }.first?.nextAttemptAt == 250)
            try expectContract(try store.read { try $0.daemonHeartbeats() }.map(\.beatAt) == [108])
        },
        StoreContractCase("heartbeats", "two daemons: when one stops beating, the other takes its claims back after the allowed silence, long before the lease ends") { store in
            // The manual clock: Unix seconds this test moves.
            var now: Int64 = 1_000
            let policy = LivenessPolicy(interval: 2, missedBeats: 3)
            // Different hosts (or a shared store): only the silence counts.
            let first = HeartbeatKeeper(identity: heartbeat("alpha", host: "one", at: 1_000), store: store, policy: policy, localProcess: nil)
            let metrics = ReclaimMetrics()
            let second = HeartbeatKeeper(
                identity: heartbeat("beta", host: "two", at: 1_000), store: store, policy: policy, localProcess: nil, metrics: metrics)
            _ = try OutboxContract.enqueue(store, 8, now: 1_000, giveUpAt: 5_000)
            try first.beat(now: now)
            try second.beat(now: now)
            let alphaClaims = try store.write { try $0.claimDue(.mail, owner: "alpha:0", now: 1_000, leaseUntil: 1_150, limit: 4) }
            _ = try store.write { try $0.claimDue(.mail, owner: "beta:0", now: 1_000, leaseUntil: 1_150, limit: 4) }
            try expectContract(alphaClaims.count == 4)

            // alpha dies after its beat at 1,000; beta beats every 2 s.
            var reclaimedAt: Int64?
            while now < 1_020 {
                now += 2
                let reclaimed = try second.beat(now: now)
                if reclaimed.owners > 0 {
                    try expectContract(reclaimed == ReclaimedClaims(messages: 4, webhooks: 0, owners: 1))
                    reclaimedAt = now
                    break
                }
                let at = now
                try expectContract(try store.write { try $0.claimDue(.mail, owner: "beta:1", now: at, leaseUntil: at + 150, limit: 10) }.isEmpty)
            }
            // The first beat after more than 6 s of silence: 1,008 (at 1,006 it was exactly 6).
            try expectContract(reclaimedAt == 1_008)
            try expectContract(metrics.snapshot().messages == 4)
            let taken = try store.write { try $0.claimDue(.mail, owner: "beta:1", now: 1_008, leaseUntil: 1_158, limit: 10) }
            try expectContract(Set(taken.map(\.message.id)) == Set(alphaClaims.map(\.message.id)))
            try expectContract(try store.read { try $0.daemonHeartbeats() }.map(\.owner) == ["beta"])
            // beta stops gracefully: its row goes.
            try second.remove()
            try expectContract(try store.read { try $0.daemonHeartbeats() }.isEmpty)
        },
        StoreContractCase("heartbeats", "on one machine, a restarted daemon takes back at once the claims of the process whose pid is gone, not of a live one") { store in
            _ = try OutboxContract.enqueue(store, 3, now: 1_000, giveUpAt: 5_000)
            try store.write { try $0.beat(DaemonHeartbeat(owner: "box:7:1", host: "box", pid: 7, startedAt: 990, beatAt: 1_000)) }
            try store.write { try $0.beat(DaemonHeartbeat(owner: "box:8:1", host: "box", pid: 8, startedAt: 990, beatAt: 1_000)) }
            _ = try store.write { try $0.claimDue(.mail, owner: "box:7:1:0", now: 1_000, leaseUntil: 1_150, limit: 2) }
            _ = try store.write { try $0.claimDue(.mail, owner: "box:8:1:0", now: 1_000, leaseUntil: 1_150, limit: 1) }
            let restarted = HeartbeatKeeper(
                identity: DaemonHeartbeat(owner: "box:9:2", host: "box", pid: 9, startedAt: 1_001, beatAt: 1_001), store: store,
                localProcess: { $0 == 7 ? .gone : .running(startedAt: 980) })
            try expectContract(try restarted.beat(now: 1_001) == ReclaimedClaims(messages: 2, webhooks: 0, owners: 1))
            try expectContract(try store.read { try $0.daemonHeartbeats() }.map(\.owner) == ["box:8:1", "box:9:2"])
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "box:9:2:0", now: 1_001, leaseUntil: 1_151, limit: 10) }.count == 2)
        },
    ]
}
