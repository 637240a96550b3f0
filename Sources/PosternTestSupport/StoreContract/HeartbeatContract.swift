import PosternCore

/// Daemons' heartbeats (``HeartbeatWriter``).
enum HeartbeatContract {
    static func heartbeat(_ owner: String, host: String = "box", pid: Int32 = 1, at: Int64) -> DaemonHeartbeat {
        DaemonHeartbeat(owner: owner, host: host, pid: pid, startedAt: 50, beatAt: at)
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
        }
    ]
}
