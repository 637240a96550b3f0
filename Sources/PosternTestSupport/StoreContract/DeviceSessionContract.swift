import PosternCore

/// The sessions users see (``DeviceSession``): one per refresh family, read by id and by account,
/// moved on by a refresh, forgotten with their family's revocation and at their expiry.
enum DeviceSessionContract {
    static func session(
        _ id: String, family: String? = nil, uid: String = "u1", method: String = "emailLink", createdAt: Int64 = 20,
        expiresAt: Int64 = 1_000
    ) -> DeviceSession {
        DeviceSession(
            id: id, uid: uid, family: family ?? "f-\(id)", deviceName: "Firefox on Linux", network: "203.0.113.0/24", method: method,
            createdAt: createdAt, lastUsedAt: createdAt, expiresAt: expiresAt)
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("sessions", "a session reads back by id as written and in its account's list, newest first, the expired left out") { store in
            try SessionContract.accounts(store, ["u1", "u2"])
            var client = session("c", createdAt: 30)
            client.clientID = "grafana"
            client.deviceName = nil
            client.network = nil
            let written = client
            try store.write { tx in
                try tx.insertDeviceSession(session("a", createdAt: 10))
                try tx.insertDeviceSession(written)
                try tx.insertDeviceSession(session("b", createdAt: 20))
                try tx.insertDeviceSession(session("old", createdAt: 40, expiresAt: 100))
                try tx.insertDeviceSession(session("other", uid: "u2"))
            }
            try expectContract(try store.read { try $0.deviceSession(id: "c") }, equals: written, "session c")
            try expectContract(try store.read { try $0.deviceSession(id: "a") }, equals: session("a", createdAt: 10), "session a")
            try expectContract(try store.read { try $0.deviceSession(id: "nobody") } == nil, "no such session")
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 100) }.map(\.id), equals: ["c", "b", "a"], "u1's list")
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 99) }.map(\.id), equals: ["old", "c", "b", "a"], "before old expired")
            try expectContract(try store.read { try $0.deviceSessions(uid: "u2", now: 100) }.map(\.id), equals: ["other"], "u2's list")
        },
        StoreContractCase("sessions", "a taken id or family, and a session of no account, are refused") { store in
            try SessionContract.accounts(store, ["u1"])
            try store.write { try $0.insertDeviceSession(session("a", family: "f")) }
            try expectContractThrows((any Error).self, "a second id a") { try store.write { try $0.insertDeviceSession(session("a", family: "g")) } }
            try expectContractThrows((any Error).self, "a second session of family f") { try store.write { try $0.insertDeviceSession(session("b", family: "f")) } }
            try expectContractThrows((any Error).self, "a session of nobody") { try store.write { try $0.insertDeviceSession(session("c", uid: "ghost")) } }
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 0) }.map(\.id), equals: ["a"], "only a")
        },
        StoreContractCase("sessions", "a refresh moves its family's session's last use and expiry and answers its id; an unknown family answers nil") { store in
            try SessionContract.accounts(store, ["u1"])
            try store.write { tx in
                try tx.insertDeviceSession(session("a", family: "f"))
                try tx.insertDeviceSession(session("b", family: "g"))
            }
            try expectContract(try store.write { try $0.touchDeviceSession(family: "f", at: 500, expiresAt: 2_000) }, equals: "a", "the id of f's session")
            try expectContract(try store.write { try $0.touchDeviceSession(family: "nobody", at: 500, expiresAt: 2_000) } == nil, "no session of that family")
            let touched = try store.read { try $0.deviceSession(id: "a") }
            try expectContract(touched?.lastUsedAt, equals: 500, "last used")
            try expectContract(touched?.expiresAt, equals: 2_000, "expires")
            try expectContract(touched?.createdAt, equals: 20, "created unchanged")
            try expectContract(try store.read { try $0.deviceSession(id: "b") }, equals: session("b", family: "g"), "b unchanged")
        },
        StoreContractCase("sessions", "revoking a family, an account's tokens or one sign-in method's forgets their sessions, and only theirs") { store in
            try SessionContract.accounts(store, ["u1", "u2"])
            try store.write { tx in
                try tx.insertDeviceSession(session("a", family: "fa"))
                try tx.insertDeviceSession(session("b", family: "fb", method: "password"))
                try tx.insertDeviceSession(session("c", family: "fc", method: "phone"))
                try tx.insertDeviceSession(session("d", family: "fd", uid: "u2"))
            }
            _ = try store.write { try $0.revokeRefreshFamily("fa") }
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 0) }.map(\.id).sorted(), equals: ["b", "c"], "a is gone")
            _ = try store.write { try $0.revokeRefreshTokens(uid: "u1", method: "password") }
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 0) }.map(\.id), equals: ["c"], "the password session is gone")
            _ = try store.write { try $0.revokeRefreshTokens(uid: "u1") }
            try expectContract(try store.read { try $0.deviceSessions(uid: "u1", now: 0) }.isEmpty, "u1 has none")
            try expectContract(try store.read { try $0.deviceSession(id: "d") } != nil, "u2's kept")
        },
        StoreContractCase("sessions", "sessions are pruned at their expiry, at most the limit at a time, and go with their account") { store in
            try SessionContract.accounts(store, ["u1", "u2"])
            try store.write { tx in
                for id in ["a", "b", "c"] { try tx.insertDeviceSession(session(id, expiresAt: 100)) }
                try tx.insertDeviceSession(session("later", expiresAt: 101))
                try tx.insertDeviceSession(session("other", uid: "u2"))
            }
            try expectContract(try store.write { try $0.pruneDeviceSessions(expiredBy: 99, limit: 10) }, equals: 0, "pruned at 99")
            try expectContract(try store.write { try $0.pruneDeviceSessions(expiredBy: 100, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneDeviceSessions(expiredBy: 100, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.read { try $0.deviceSession(id: "later") } != nil, "the later one kept")
            try store.write { try $0.deleteAccount(uid: "u2") }
            try expectContract(try store.read { try $0.deviceSession(id: "other") } == nil, "gone with its account")
        },
    ]
}
