import PosternCore
import PosternCrypto
import Synchronization

/// The OpenID Connect provider's rows. Authorization codes: by the hash of the code, bound to what
/// they were issued for, consumed exactly once (also when many redeem one at once), and pruned at
/// expiry. Clients: every field read back, removal taking their codes and consents and revoking
/// their refresh tokens. Pending requests and browser sessions: by id or hash, pruned at expiry.
/// Consents: one per account and client, replaced by a new grant. An account's deletion takes its
/// codes, sessions and consents.
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

    static var cases: [StoreContractCase] { codeCases + clientCases + requestCases + browserSessionCases + consentCases }

    static let codeCases: [StoreContractCase] = [
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

extension OIDCContract {
    /// A confidential client with every field set (none at its default: it signs with RS256),
    /// registered at `createdAt`.
    static func client(_ id: String, createdAt: Int64 = 500) -> OIDCClient {
        OIDCClient(
            clientID: id, name: "Grafana \"ops\" – Zürich", authentication: .secretHash(Array(repeating: 0x5A, count: 32)),
            redirectURIs: ["https://grafana.example.com/login/generic_oauth", "http://127.0.0.1/callback?x=1&y=%2F"],
            postLogoutRedirectURIs: ["https://grafana.example.com/login"], scopes: ["openid", "email", "profile", "offline_access"],
            firstParty: true, allowNoPKCE: true, idTokenSignedResponseAlg: .rs256, createdAt: createdAt)
    }

    /// A public client with the defaults.
    static func publicClient(_ id: String, createdAt: Int64 = 500) -> OIDCClient {
        OIDCClient(
            clientID: id, name: "Notes", authentication: .publicClient, redirectURIs: ["com.example.notes:/callback"], createdAt: createdAt)
    }

    static func refresh(_ hash: UInt8, client: String?, uid: String = "u1") -> RefreshTokenRecord {
        RefreshTokenRecord(
            hash: [hash, 0xCD], family: "family-\(hash)", uid: uid, authTime: 990, method: "emailLink", createdAt: 1_000, expiresAt: 90_000,
            clientID: client)
    }

    static func consent(_ uid: String, _ client: String, scopes: [String] = ["openid", "email"], at grantedAt: Int64 = 1_000) -> OIDCConsent {
        OIDCConsent(uid: uid, clientID: client, scopes: scopes, grantedAt: grantedAt)
    }

    /// Fails the case unless `body` throws `expected` (a `StoreError`).
    static func expectStoreError<R>(_ expected: StoreError, _ what: String, file: StaticString = #fileID, line: UInt = #line, _ body: () throws -> R)
        throws
    {
        let error = try expectContractThrows(StoreError.self, what, file: file, line: line, body)
        try expectContract(error, equals: expected, what, file: file, line: line)
    }

    static let clientCases: [StoreContractCase] = [
        StoreContractCase("oidc", "a client reads back every field, confidential and public; a taken id is refused and the first kept") { store in
            let (full, open) = (client("grafana"), publicClient("notes-spa"))
            try store.write { tx in
                try tx.insertOIDCClient(full)
                try tx.insertOIDCClient(open)
            }
            try expectContract(try store.read { try $0.oidcClient(id: "grafana") }, equals: full, "the confidential client")
            try expectContract(try store.read { try $0.oidcClient(id: "notes-spa") }, equals: open, "the public client")
            try expectContract(try store.read { try $0.oidcClient(id: "notes-spa") }?.isPublic, equals: true, "public")
            try expectContract(try store.read { try $0.oidcClient(id: "gitea") } == nil, "no gitea")
            try expectContract(try store.read { try $0.oidcClient(id: "GRAFANA") } == nil, "ids are case-sensitive")
            try expectContractThrows(StoreError.self, "a second grafana") {
                try store.write { try $0.insertOIDCClient(publicClient("grafana")) }
            }
            try expectContract(try store.read { try $0.oidcClient(id: "grafana") }, equals: full, "the first grafana kept")
        },
        StoreContractCase("oidc", "updating a client replaces its registration; an unknown client is notFound") { store in
            try store.write { try $0.insertOIDCClient(client("grafana")) }
            let rotated = OIDCClient(
                clientID: "grafana", name: "Grafana", authentication: .secretHash(Array(repeating: 0x11, count: 32)),
                redirectURIs: ["https://grafana.example.com/cb"], scopes: ["openid"], createdAt: 500)
            try store.write { try $0.updateOIDCClient(rotated) }
            try expectContract(try store.read { try $0.oidcClient(id: "grafana") }, equals: rotated, "replaced")
            try expectContract(
                try store.read { try $0.oidcClient(id: "grafana") }?.idTokenSignedResponseAlg, equals: .es256, "its algorithm replaced too")
            try expectStoreError(.notFound("oidc client"), "an unknown client") {
                try store.write { try $0.updateOIDCClient(publicClient("gitea")) }
            }
            try expectContract(try store.read { try $0.oidcClient(id: "gitea") } == nil, "not created by the update")
        },
        StoreContractCase("oidc", "clients are listed oldest first, then by id byte order") { store in
            try store.write { tx in
                try tx.insertOIDCClient(publicClient("b", createdAt: 700))
                try tx.insertOIDCClient(client("Zeta", createdAt: 600))
                try tx.insertOIDCClient(client("alpha", createdAt: 600))
                try tx.insertOIDCClient(publicClient("_x", createdAt: 600))
                try tx.insertOIDCClient(client("a", createdAt: 800))
            }
            try expectContract(try store.read { try $0.oidcClients() }.map(\.clientID), equals: ["Zeta", "_x", "alpha", "b", "a"], "the order")
        },
        StoreContractCase("oidc", "removing a client removes its codes and consents and revokes its refresh tokens, not another client's or the API's") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                try tx.insertOIDCClient(client("grafana"))
                try tx.insertOIDCClient(publicClient("gitea"))
                var theirs = code(1)
                theirs.clientID = "grafana"
                var others = code(2)
                others.clientID = "gitea"
                try tx.insertAuthorizationCode(theirs)
                try tx.insertAuthorizationCode(others)
                try tx.upsertOIDCConsent(consent("u1", "grafana"))
                try tx.upsertOIDCConsent(consent("u2", "grafana"))
                try tx.upsertOIDCConsent(consent("u1", "gitea"))
                try tx.insertRefreshToken(refresh(1, client: "grafana"))
                try tx.insertRefreshToken(refresh(2, client: "grafana", uid: "u2"))
                try tx.insertRefreshToken(refresh(3, client: "gitea"))
                try tx.insertRefreshToken(refresh(4, client: nil))
            }
            try expectContract(try store.write { try $0.deleteOIDCClient(id: "grafana") }, equals: true, "removed")
            try expectContract(try store.read { try $0.oidcClient(id: "grafana") } == nil, "grafana gone")
            try expectContract(try store.read { try $0.authorizationCode(hash: [1, 0xAB]) } == nil, "grafana's code gone")
            try expectContract(try store.read { try $0.authorizationCode(hash: [2, 0xAB]) } != nil, "gitea's code kept")
            try expectContract(try store.read { try $0.oidcConsent(uid: "u1", clientID: "grafana") } == nil, "u1's consent to grafana gone")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u2") }, equals: [], "u2's consent to grafana gone")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u1") }, equals: [consent("u1", "gitea")], "u1's consent to gitea kept")
            for hash: UInt8 in [1, 2] {
                let token = try requireContract(try store.read { try $0.refreshToken(hash: [hash, 0xCD]) }, "grafana's token \(hash) kept")
                try expectContract(token.revoked, "grafana's token \(hash) revoked")
            }
            try expectContract(try store.read { try $0.refreshToken(hash: [3, 0xCD]) }?.revoked, equals: false, "gitea's token live")
            try expectContract(try store.read { try $0.refreshToken(hash: [4, 0xCD]) }?.revoked, equals: false, "the API's token live")
            try expectContract(try store.write { try $0.deleteOIDCClient(id: "grafana") }, equals: false, "a second removal")
            try expectContract(try store.write { try $0.deleteOIDCClient(id: "nobody") }, equals: false, "an unknown client")
            // The id is free again, and a new registration starts with nothing granted.
            try store.write { try $0.insertOIDCClient(publicClient("grafana")) }
            try expectContract(try store.read { try $0.oidcConsent(uid: "u1", clientID: "grafana") } == nil, "no consent carried over")
        },
    ]

    static func request(_ id: String, expiresAt: Int64 = 1_900, parameters: [String: String]? = nil) -> OIDCPendingRequest {
        OIDCPendingRequest(
            id: id, browserHash: [0xB0, 0x0C] + Array(id.utf8), clientID: "grafana",
            parameters: parameters ?? [
                "response_type": "code", "client_id": "grafana", "redirect_uri": "https://grafana.example.com/login/generic_oauth",
                "scope": "openid email", "state": "a\"b\\c</script>&é 🔑", "nonce": "", "login_hint": "ada@example.com",
            ], createdAt: 1_000, expiresAt: expiresAt)
    }

    static let requestCases: [StoreContractCase] = [
        StoreContractCase("oidc", "a pending request reads back with its parameters as sent; a taken id is refused; deleting it says whether it was there") { store in
            let written = request("req-1")
            try store.write { tx in
                try tx.insertOIDCPendingRequest(written)
                try tx.insertOIDCPendingRequest(request("req-2", parameters: [:]))
            }
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-1") }, equals: written, "req-1")
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-2") }?.parameters, equals: [:], "no parameters")
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-3") } == nil, "no req-3")
            try expectContractThrows(StoreError.self, "a second req-1") {
                try store.write { try $0.insertOIDCPendingRequest(request("req-1", parameters: ["state": "other"])) }
            }
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-1") }, equals: written, "the first req-1 kept")
            try expectContract(try store.write { try $0.deleteOIDCPendingRequest(id: "req-1") }, equals: true, "deleted")
            try expectContract(try store.write { try $0.deleteOIDCPendingRequest(id: "req-1") }, equals: false, "deleted twice")
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-1") } == nil, "req-1 gone")
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "req-2") } != nil, "req-2 kept")
        },
        StoreContractCase("oidc", "pending requests are pruned at their expiry, at most the limit at a time") { store in
            try store.write { tx in
                for id in ["r1", "r2", "r3"] { try tx.insertOIDCPendingRequest(request(id, expiresAt: 1_900)) }
                try tx.insertOIDCPendingRequest(request("r4", expiresAt: 1_901))
            }
            try expectContract(try store.write { try $0.pruneOIDCPendingRequests(expiredBy: 1_899, limit: 10) }, equals: 0, "pruned at 1899")
            try expectContract(try store.write { try $0.pruneOIDCPendingRequests(expiredBy: 1_900, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneOIDCPendingRequests(expiredBy: 1_900, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.write { try $0.pruneOIDCPendingRequests(expiredBy: 1_900, limit: 2) }, equals: 0, "none left")
            for id in ["r1", "r2", "r3"] {
                try expectContract(try store.read { try $0.oidcPendingRequest(id: id) } == nil, "\(id) pruned")
            }
            try expectContract(try store.read { try $0.oidcPendingRequest(id: "r4") } != nil, "the later one kept")
        },
    ]

    static func browserSession(_ hash: UInt8, uid: String = "u1", expiresAt: Int64 = 9_000) -> OIDCBrowserSession {
        OIDCBrowserSession(
            hash: [hash, 0xEF], uid: uid, authTime: 990, methods: ["link", "otp"], sessionVersion: 3, createdAt: 1_000, expiresAt: expiresAt)
    }

    static let browserSessionCases: [StoreContractCase] = [
        StoreContractCase("oidc", "a browser session reads back by its hash; a taken hash is refused; one of no account is notFound") { store in
            try account(store, "u1")
            var bare = browserSession(2)
            bare.methods = []
            let (full, none) = (browserSession(1), bare)
            try store.write { tx in
                try tx.insertOIDCBrowserSession(full)
                try tx.insertOIDCBrowserSession(none)
            }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [1, 0xEF]) }, equals: full, "session 1")
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [2, 0xEF]) }, equals: none, "session 2, no methods")
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [9, 0xEF]) } == nil, "no session 9")
            try expectContractThrows(StoreError.self, "a second session 1") {
                try store.write { try $0.insertOIDCBrowserSession(browserSession(1, expiresAt: 1)) }
            }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [1, 0xEF]) }, equals: full, "session 1 kept")
            try expectStoreError(.notFound("account"), "a session of nobody") {
                try store.write { try $0.insertOIDCBrowserSession(browserSession(3, uid: "ghost")) }
            }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [3, 0xEF]) } == nil, "nothing stored")
        },
        StoreContractCase("oidc", "browser sessions end one at a time (logout) or all of an account's at once") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                for hash: UInt8 in [1, 2, 3] { try tx.insertOIDCBrowserSession(browserSession(hash, uid: "u1")) }
                try tx.insertOIDCBrowserSession(browserSession(4, uid: "u2"))
            }
            try expectContract(try store.write { try $0.deleteOIDCBrowserSession(hash: [1, 0xEF]) }, equals: true, "logout")
            try expectContract(try store.write { try $0.deleteOIDCBrowserSession(hash: [1, 0xEF]) }, equals: false, "a second logout")
            try expectContract(try store.write { try $0.deleteOIDCBrowserSessions(uid: "u1") }, equals: 2, "u1's other two")
            try expectContract(try store.write { try $0.deleteOIDCBrowserSessions(uid: "u1") }, equals: 0, "none left for u1")
            for hash: UInt8 in [1, 2, 3] {
                try expectContract(try store.read { try $0.oidcBrowserSession(hash: [hash, 0xEF]) } == nil, "session \(hash) ended")
            }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [4, 0xEF]) } != nil, "u2's session kept")
        },
        StoreContractCase("oidc", "browser sessions are pruned at their expiry, at most the limit at a time") { store in
            try account(store, "u1")
            try store.write { tx in
                for hash: UInt8 in [1, 2, 3] { try tx.insertOIDCBrowserSession(browserSession(hash, expiresAt: 9_000)) }
                try tx.insertOIDCBrowserSession(browserSession(4, expiresAt: 9_001))
            }
            try expectContract(try store.write { try $0.pruneOIDCBrowserSessions(expiredBy: 8_999, limit: 10) }, equals: 0, "pruned at 8999")
            try expectContract(try store.write { try $0.pruneOIDCBrowserSessions(expiredBy: 9_000, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneOIDCBrowserSessions(expiredBy: 9_000, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.write { try $0.pruneOIDCBrowserSessions(expiredBy: 9_000, limit: 2) }, equals: 0, "none left")
            for hash: UInt8 in [1, 2, 3] {
                try expectContract(try store.read { try $0.oidcBrowserSession(hash: [hash, 0xEF]) } == nil, "session \(hash) pruned")
            }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [4, 0xEF]) } != nil, "the later one kept")
        },
    ]

    static let consentCases: [StoreContractCase] = [
        StoreContractCase("oidc", "a consent reads back; a new grant replaces it; it needs an account and a client (notFound)") { store in
            try account(store, "u1")
            try store.write { try $0.insertOIDCClient(client("grafana")) }
            try store.write { try $0.upsertOIDCConsent(consent("u1", "grafana", scopes: ["openid"], at: 1_000)) }
            try expectContract(
                try store.read { try $0.oidcConsent(uid: "u1", clientID: "grafana") }, equals: consent("u1", "grafana", scopes: ["openid"], at: 1_000),
                "the first grant")
            let wider = consent("u1", "grafana", scopes: ["openid", "email", "offline_access"], at: 2_000)
            try store.write { try $0.upsertOIDCConsent(wider) }
            try expectContract(try store.read { try $0.oidcConsent(uid: "u1", clientID: "grafana") }, equals: wider, "replaced")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u1") }, equals: [wider], "one consent, not two")
            try expectStoreError(.notFound("account"), "a consent of nobody") {
                try store.write { try $0.upsertOIDCConsent(consent("ghost", "grafana")) }
            }
            try expectStoreError(.notFound("oidc client"), "a consent to no client") {
                try store.write { try $0.upsertOIDCConsent(consent("u1", "gitea")) }
            }
            try expectContract(try store.read { try $0.oidcConsent(uid: "u1", clientID: "gitea") } == nil, "nothing stored")
            try expectContract(try store.read { try $0.oidcConsents(uid: "ghost") }, equals: [], "nobody's consents")
        },
        StoreContractCase("oidc", "an account's consents are listed by client id; withdrawing one says whether it was there") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                for id in ["notes", "Grafana", "gitea"] { try tx.insertOIDCClient(publicClient(id)) }
                for id in ["notes", "gitea", "Grafana"] { try tx.upsertOIDCConsent(consent("u1", id)) }
                try tx.upsertOIDCConsent(consent("u2", "notes"))
            }
            try expectContract(try store.read { try $0.oidcConsents(uid: "u1") }.map(\.clientID), equals: ["Grafana", "gitea", "notes"], "u1's")
            try expectContract(try store.write { try $0.deleteOIDCConsent(uid: "u1", clientID: "gitea") }, equals: true, "withdrawn")
            try expectContract(try store.write { try $0.deleteOIDCConsent(uid: "u1", clientID: "gitea") }, equals: false, "withdrawn twice")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u1") }.map(\.clientID), equals: ["Grafana", "notes"], "u1's left")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u2") }.map(\.clientID), equals: ["notes"], "u2's untouched")
        },
        StoreContractCase("oidc", "deleting an account deletes its browser sessions and consents, not another account's") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                try tx.insertOIDCClient(publicClient("notes"))
                try tx.insertOIDCBrowserSession(browserSession(1, uid: "u1"))
                try tx.insertOIDCBrowserSession(browserSession(2, uid: "u2"))
                try tx.upsertOIDCConsent(consent("u1", "notes"))
                try tx.upsertOIDCConsent(consent("u2", "notes"))
            }
            try store.write { try $0.deleteAccount(uid: "u1") }
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [1, 0xEF]) } == nil, "u1's session gone")
            try expectContract(try store.read { try $0.oidcConsent(uid: "u1", clientID: "notes") } == nil, "u1's consent gone")
            try expectContract(try store.read { try $0.oidcBrowserSession(hash: [2, 0xEF]) } != nil, "u2's session kept")
            try expectContract(try store.read { try $0.oidcConsents(uid: "u2") }, equals: [consent("u2", "notes")], "u2's consent kept")
            try expectContract(try store.read { try $0.oidcClient(id: "notes") } != nil, "the client kept")
        },
    ]
}
