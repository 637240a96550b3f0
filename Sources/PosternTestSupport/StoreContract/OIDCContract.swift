import PosternCore
import Synchronization

/// OpenID Connect authorization codes: by the hash of the code, bound to what they were issued for,
/// consumed exactly once (also when many redeem one at once), and pruned at expiry.
enum OIDCContract {
    static func code(_ hash: UInt8, uid: String = "u1", expiresAt: Int64 = 1_060) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: [hash, 0xAB], clientID: "grafana", uid: uid, redirectURI: "https://grafana.example.com/login/generic_oauth",
            scopes: ["openid", "email", "offline_access"], nonce: "n-0S6_WzA2Mj",
            codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", authTime: 990, methods: ["link"],
            refreshFamily: "family-\(hash)", createdAt: 1_000, expiresAt: expiresAt)
    }

    static func account(_ store: any Store, _ uids: String...) throws {
        try store.write { tx in for uid in uids { try tx.insertAccount(Account(uid: uid, createdAt: 1)) } }
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("oidc", "a code reads back by its hash as written, with and without nonce and challenge; a taken hash is refused") { store in
            try account(store, "u1")
            let full = code(1)
            var bare = code(2)
            bare.nonce = nil
            bare.codeChallenge = nil
            bare.methods = []
            bare.scopes = ["openid"]
            let (first, second) = (full, bare)
            try store.write { tx in
                try tx.insertAuthorizationCode(first)
                try tx.insertAuthorizationCode(second)
            }
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) }, equals: full, "code 1")
            try expectContract(try store.read { try $0.authorizationCode(hash: [2, 0xAB]) }, equals: bare, "code 2")
            try expectContract(try store.read { try $0.authorizationCode(hash: [9, 0xAB]) } == nil, "no code 9")
            var other = code(1)
            other.clientID = "gitea"
            let taken = other
            try expectContractThrows((any Error).self, "a second code 1") { try store.write { try $0.insertAuthorizationCode(taken) } }
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) }, equals: full, "code 1 kept")
        },
        StoreContractCase("oidc", "a code is consumed once: the first consume returns it consumed, every later one is a replay of that record") { store in
            try account(store, "u1")
            try store.write { try $0.insertAuthorizationCode(code(1)) }
            var consumed = code(1)
            consumed.consumedAt = 1_010
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_010) }, equals: .consumed(consumed), "first")
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_020) }, equals: .replayed(consumed), "second")
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_030) }, equals: .replayed(consumed), "third")
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) }?.consumedAt, equals: 1_010, "consumed at")
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [9, 0xAB], at: 1_010) } == nil, "an unknown code")
        },
        StoreContractCase("oidc", "a consume in a transaction that throws leaves the code unconsumed") { store in
            struct Abandoned: Error {}
            try account(store, "u1")
            try store.write { try $0.insertAuthorizationCode(code(1)) }
            try expectContractThrows(Abandoned.self, "the abandoned redemption") {
                try store.write { tx in
                    _ = try tx.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_010)
                    throw Abandoned()
                }
            }
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) }?.consumedAt == nil, "not consumed")
            var consumed = code(1)
            consumed.consumedAt = 1_020
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_020) }, equals: .consumed(consumed), "redeemed later")
        },
        StoreContractCase("oidc", "a code of an account that does not exist is refused; deleting the account deletes its codes") { store in
            try expectContractThrows((any Error).self, "a code of nobody") { try store.write { try $0.insertAuthorizationCode(code(1, uid: "ghost")) } }
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) } == nil, "nothing stored")
            try account(store, "u1", "u2")
            try store.write { tx in
                try tx.insertAuthorizationCode(code(2, uid: "u1"))
                try tx.insertAuthorizationCode(code(3, uid: "u2"))
            }
            try store.write { try $0.deleteAccount(uid: "u1") }
            try expectContract(try store.read { try $0.authorizationCode(hash: [2, 0xAB]) } == nil, "u1's code gone")
            try expectContract(try store.write { try $0.consumeAuthorizationCode(hash: [2, 0xAB], at: 1_010) } == nil, "u1's code unknown")
            try expectContract(try store.read { try $0.authorizationCode(hash: [3, 0xAB]) } != nil, "u2's code kept")
        },
        StoreContractCase("oidc", "codes are pruned at their expiry, consumed or not, at most the limit at a time") { store in
            try account(store, "u1")
            try store.write { tx in
                try tx.insertAuthorizationCode(code(1, expiresAt: 1_060))
                try tx.insertAuthorizationCode(code(2, expiresAt: 1_060))
                try tx.insertAuthorizationCode(code(3, expiresAt: 1_060))
                try tx.insertAuthorizationCode(code(4, expiresAt: 1_061))
            }
            _ = try store.write { try $0.consumeAuthorizationCode(hash: [2, 0xAB], at: 1_010) }
            try expectContract(try store.write { try $0.pruneAuthorizationCodes(expiredBy: 1_059, limit: 10) }, equals: 0, "pruned at 1059")
            try expectContract(try store.write { try $0.pruneAuthorizationCodes(expiredBy: 1_060, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneAuthorizationCodes(expiredBy: 1_060, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.write { try $0.pruneAuthorizationCodes(expiredBy: 1_060, limit: 2) }, equals: 0, "none left")
            for hash: UInt8 in [1, 2, 3] {
                try expectContract(try store.read { try $0.authorizationCode(hash: [hash, 0xAB]) } == nil, "code \(hash) pruned")
            }
            try expectContract(try store.read { try $0.authorizationCode(hash: [4, 0xAB]) } != nil, "the later one kept")
        },
        StoreContractCase("oidc", "50 threads redeem one code at once: exactly one consumes it, the other 49 find a replay") { store in
            try account(store, "u1")
            try store.write { try $0.insertAuthorizationCode(code(1)) }
            let outcomes = Mutex<[String]>([])
            let winners = Mutex<[Int64]>([])
            onThreads(50) { index in
                let outcome: String
                do {
                    switch try store.write({ try $0.consumeAuthorizationCode(hash: [1, 0xAB], at: 1_000 + Int64(index)) }) {
                    case .consumed(let record)?:
                        winners.withLock { $0.append(record.consumedAt ?? -1) }
                        outcome = "consumed"
                    case .replayed?: outcome = "replayed"
                    case nil: outcome = "unknown"
                    }
                } catch {
                    outcome = "threw \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            let all = outcomes.withLock { $0 }
            try expectContract(all.filter { $0 == "consumed" }.count, equals: 1, "consumers (\(Set(all)))")
            try expectContract(all.filter { $0 == "replayed" }.count, equals: 49, "replays (\(Set(all)))")
            // The record holds the winner's time, which every replay reads.
            let won = try requireContract(winners.withLock { $0.first }, "the winner's consumedAt")
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) }?.consumedAt, equals: won, "consumed at")
        },
    ]
}
