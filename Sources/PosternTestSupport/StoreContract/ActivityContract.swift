import PosternCore

/// Accounts' activity: appended, read newest first by pages, asked for a sign-in from a device,
/// pruned by age, and deleted with the account.
enum ActivityContract {
    static func entry(_ uid: String, at: Int64, kind: String = "signIn", device: String? = "Firefox on Linux", network: String? = "203.0.113.0/24")
        -> ActivityEntry
    {
        ActivityEntry(uid: uid, at: at, kind: kind, method: "password", deviceName: device, network: network)
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("activity", "an account's activity reads newest first as written, paged by (at, id) with nothing skipped or repeated, others' apart") { store in
            try store.write { tx in
                try tx.recordActivity(entry("u1", at: 10))
                try tx.recordActivity(entry("u1", at: 30, kind: "passwordChanged", device: nil, network: nil))
                try tx.recordActivity(entry("u2", at: 20))
                // Three at one second: the id orders them.
                for kind in ["emailChanged", "emailVerified", "sessionRevoked"] { try tx.recordActivity(entry("u1", at: 20, kind: kind)) }
            }
            let all = try store.read { try $0.activity(uid: "u1", after: nil, limit: 10) }
            try expectContract(all.map(\.kind), equals: ["passwordChanged", "sessionRevoked", "emailVerified", "emailChanged", "signIn"], "u1's, newest first")
            try expectContract(all.allSatisfy { $0.uid == "u1" && $0.id > 0 }, "u1's with ids")
            try expectContract(all.last?.deviceName, equals: "Firefox on Linux", "the device")
            try expectContract(all.last?.network, equals: "203.0.113.0/24", "the network")
            try expectContract(all.last?.method, equals: "password", "the method")
            try expectContract(all.first?.deviceName == nil && all.first?.network == nil, "none where none was written")
            var paged: [ActivityEntry] = []
            var cursor: ActivityCursor?
            repeat {
                let page = try store.read { [cursor] in try $0.activity(uid: "u1", after: cursor, limit: 2) }
                paged += page
                cursor = page.count == 2 ? page.last.map { ActivityCursor(at: $0.at, id: $0.id) } : nil
            } while cursor != nil
            try expectContract(paged, equals: all, "the pages, together")
            try expectContract(try store.read { try $0.activity(uid: "u2", after: nil, limit: 10) }.count, equals: 1, "u2's")
        },
        StoreContractCase("activity", "a sign-in from a device and network is found since a time, nil matching nil, other kinds and accounts not") { store in
            try store.write { tx in
                try tx.recordActivity(entry("u1", at: 100))
                try tx.recordActivity(entry("u1", at: 100, device: nil, network: nil))
                try tx.recordActivity(entry("u1", at: 200, kind: "passwordChanged", device: "Safari on iPhone", network: "198.51.100.0/24"))
                try tx.recordActivity(entry("u2", at: 200, device: "Chrome on Android"))
            }
            func has(_ uid: String, _ device: String?, _ network: String?, since: Int64) throws -> Bool {
                try store.read { try $0.hasSignIn(uid: uid, since: since, from: SessionOrigin(deviceName: device, network: network)) }
            }
            try expectContract(try has("u1", "Firefox on Linux", "203.0.113.0/24", since: 100), "the sign-in at 100")
            try expectContract(try has("u1", "Firefox on Linux", "203.0.113.0/24", since: 101) == false, "not since 101")
            try expectContract(try has("u1", "Firefox on Linux", "198.51.100.0/24", since: 0) == false, "another network")
            try expectContract(try has("u1", nil, nil, since: 0), "nil matches nil")
            try expectContract(try has("u1", "Safari on iPhone", "198.51.100.0/24", since: 0) == false, "not a sign-in")
            try expectContract(try has("u1", "Chrome on Android", "203.0.113.0/24", since: 0) == false, "another account's")
            try expectContract(try store.read { try $0.hasSignIn(uid: "u1", since: 100, from: nil) }, "from anywhere")
            try expectContract(try store.read { try $0.hasSignIn(uid: "u1", since: 101, from: nil) } == false, "none since 101")
            try expectContract(try store.read { try $0.hasSignIn(uid: "u3", since: 0, from: nil) } == false, "none of u3")
        },
        StoreContractCase("activity", "activity is pruned at or before the horizon, at most the limit at a time, and goes with its account") { store in
            try store.write { tx in
                try tx.insertAccount(Account(uid: "u2", createdAt: 1))
                for _ in 0..<3 { try tx.recordActivity(entry("u1", at: 100)) }
                try tx.recordActivity(entry("u1", at: 101))
                try tx.recordActivity(entry("u2", at: 500))
            }
            try expectContract(try store.write { try $0.pruneActivity(olderThan: 99, limit: 10) }, equals: 0, "pruned at 99")
            try expectContract(try store.write { try $0.pruneActivity(olderThan: 100, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneActivity(olderThan: 100, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.read { try $0.activity(uid: "u1", after: nil, limit: 10) }.map(\.at), equals: [101], "the later one kept")
            try store.write { try $0.deleteAccount(uid: "u2") }
            try expectContract(try store.read { try $0.activity(uid: "u2", after: nil, limit: 10) }.isEmpty, "gone with its account")
        },
    ]
}
