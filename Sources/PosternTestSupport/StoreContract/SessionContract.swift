import PosternCore

/// Refresh tokens (a session's server side): by hash, rotated, revoked by family, by account and by
/// sign-in method, and pruned at expiry.
enum SessionContract {
    static func token(_ hash: UInt8, family: String, uid: String = "u1", method: String = "emailLink", expiresAt: Int64 = 1_000)
        -> RefreshTokenRecord
    {
        RefreshTokenRecord(hash: [hash], family: family, uid: uid, authTime: 10, method: method, createdAt: 20, expiresAt: expiresAt)
    }

    static func accounts(_ store: any Store, _ uids: [String]) throws {
        try store.write { tx in for uid in uids { try tx.insertAccount(Account(uid: uid, createdAt: 1)) } }
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("sessions", "a token reads back by its hash as written; rotation sets rotatedAt; a taken hash is refused") { store in
            try accounts(store, ["u1"])
            var full = token(1, family: "f")
            full.rotatedAt = 30
            full.revoked = true
            let written = full
            try store.write { tx in
                try tx.insertRefreshToken(written)
                try tx.insertRefreshToken(token(2, family: "f"))
            }
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) }, equals: written, "token 1")
            try expectContract(try store.read { try $0.refreshToken(hash: [9]) } == nil, "no token 9")
            try store.write { try $0.markRefreshTokenRotated(hash: [2], at: 40) }
            try expectContract(try store.read { try $0.refreshToken(hash: [2]) }?.rotatedAt, equals: 40, "rotated at")
            try expectContractThrows((any Error).self, "a second token 1") { try store.write { try $0.insertRefreshToken(token(1, family: "g")) } }
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) }, equals: written, "token 1 kept")
        },
        StoreContractCase("sessions", "revoking a family, an account's tokens, or those of one sign-in method counts only the live ones it revoked") { store in
            try accounts(store, ["u1", "u2"])
            try store.write { tx in
                try tx.insertRefreshToken(token(1, family: "a"))
                try tx.insertRefreshToken(token(2, family: "a"))
                try tx.insertRefreshToken(token(3, family: "b", method: "password"))
                try tx.insertRefreshToken(token(4, family: "c", method: "phone"))
                try tx.insertRefreshToken(token(5, family: "d", uid: "u2"))
            }
            try expectContract(try store.write { try $0.revokeRefreshFamily("a") }, equals: 2, "family a")
            try expectContract(try store.write { try $0.revokeRefreshFamily("a") }, equals: 0, "family a again")
            try expectContract(try store.read { try $0.refreshToken(hash: [2]) }?.revoked, equals: true, "token 2 revoked")
            try expectContract(try store.write { try $0.revokeRefreshTokens(uid: "u1", method: "password") }, equals: 1, "u1's password sessions")
            try expectContract(try store.read { try $0.refreshToken(hash: [4]) }?.revoked, equals: false, "the phone session kept")
            try expectContract(try store.write { try $0.revokeRefreshTokens(uid: "u1") }, equals: 1, "u1's last live token")
            try expectContract(try store.read { try $0.refreshToken(hash: [5]) }?.revoked, equals: false, "u2's token kept")
            try expectContract(try store.write { try $0.revokeRefreshTokens(uid: "u2", method: "emailLink") }, equals: 1, "u2's")
        },
        StoreContractCase("sessions", "tokens are pruned at their expiry, live, rotated or revoked, at most the limit at a time") { store in
            try accounts(store, ["u1"])
            try store.write { tx in
                try tx.insertRefreshToken(token(1, family: "a", expiresAt: 100))
                var rotated = token(2, family: "a", expiresAt: 100)
                rotated.rotatedAt = 50
                try tx.insertRefreshToken(rotated)
                var revoked = token(3, family: "b", expiresAt: 100)
                revoked.revoked = true
                try tx.insertRefreshToken(revoked)
                try tx.insertRefreshToken(token(4, family: "c", expiresAt: 101))
            }
            try expectContract(try store.write { try $0.pruneRefreshTokens(expiredBy: 99, limit: 10) }, equals: 0, "pruned at 99")
            try expectContract(try store.write { try $0.pruneRefreshTokens(expiredBy: 100, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneRefreshTokens(expiredBy: 100, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.read { try $0.refreshToken(hash: [4]) } != nil, "the later one kept")
        },
        StoreContractCase("sessions", "a token's OpenID Connect client reads back; none for the API's own") { store in
            try accounts(store, ["u1"])
            var client = token(1, family: "f")
            client.clientID = "grafana"
            let written = client
            try store.write { tx in
                try tx.insertRefreshToken(written)
                try tx.insertRefreshToken(token(2, family: "g"))
            }
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) }, equals: written, "the client's token")
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) }?.clientID, equals: "grafana", "its client")
            try expectContract(try store.read { try $0.refreshToken(hash: [2]) }?.clientID == nil, "the API's token has no client")
        },
        StoreContractCase("sessions", "a family reads as revoked once any of its tokens is, and only then") { store in
            try accounts(store, ["u1"])
            try store.write { tx in
                try tx.insertRefreshToken(token(1, family: "a"))
                try tx.insertRefreshToken(token(2, family: "b"))
            }
            try expectContract(try store.read { try $0.isRefreshFamilyRevoked("a") } == false, "a live")
            try expectContract(try store.read { try $0.isRefreshFamilyRevoked("nobody") } == false, "an unknown family")
            _ = try store.write { try $0.revokeRefreshFamily("a") }
            try expectContract(try store.read { try $0.isRefreshFamilyRevoked("a") }, "a revoked")
            try expectContract(try store.read { try $0.isRefreshFamilyRevoked("b") } == false, "b still live")
        },
        StoreContractCase("sessions", "a token of an account that does not exist is refused") { store in
            try expectContractThrows((any Error).self, "a token of nobody") { try store.write { try $0.insertRefreshToken(token(1, family: "a", uid: "ghost")) } }
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) } == nil, "nothing stored")
        },
    ]
}
