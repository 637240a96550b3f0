import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The attacker's sequence against the admin token: guesses as fast as the server answers them
/// (400 wrong tokens in 0.2 s were all answered 401 before the budget).
@Suite("Wrong admin tokens per client IP")
struct AdminTokenBudgetTests {
    /// Daemons on one store (shared: as PostgreSQL, each with its own cache), a manual clock.
    struct Daemons {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store: InMemoryStore
        let services: [AuthService]

        init(count: Int = 3, shared: Bool = true) throws {
            store = InMemoryStore(confinedToThisMachine: !shared)
            let vault = KeyVault(
                store: store, box: try SecretBox(key: Array(repeating: 7, count: 32)), clock: clock, maxCodeLifetime: 86_400)
            var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
            config.ipPerMinute = 0
            let (store, clock) = (store, clock)
            services = try (0..<count).map { _ in
                try AuthService(store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config, hasher: .fastForTests)
            }
        }

        /// What the router does with one admin request: the budget first, then the token; nil
        /// when let through, else the status it answers (401, or 429 with its wait).
        func attempt(_ daemon: Int, _ ip: String, right: Bool) -> (status: Int, retryAfter: Int64?)? {
            do throws(AuthError) {
                try services[daemon].adminTokenGuesses.refusal(ip: ip)
                if right { return nil }
                try services[daemon].adminTokenGuesses.admit(ip: ip)
                return (401, nil)
            } catch {
                #expect(error.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
                return (429, error.details["retryAfter"].flatMap { Int64($0) })
            }
        }
    }

    static let budget = Int(AdminTokenBudget.defaultWrongTokens)
    static let spacing = AdminTokenBudget.windowSeconds / AdminTokenBudget.defaultWrongTokens

    @Test("a few wrong tokens, then 429 with Retry-After even for the right token, across daemons; others unaffected")
    func guessingStops() throws {
        let daemons = try Daemons()
        let attacker = "203.0.113.66"
        let answers = (0..<400).map { daemons.attempt($0 % 3, attacker, right: false) }
        #expect(answers.prefix(Self.budget).allSatisfy { $0?.status == 401 })
        #expect(answers.dropFirst(Self.budget).allSatisfy { $0?.status == 429 && ($0?.retryAfter ?? 0) > 0 })
        // The right token from the attacker's address is refused too, on every daemon.
        for daemon in 0..<3 {
            let refused = daemons.attempt(daemon, attacker, right: true)
            #expect(refused?.status == 429 && refused?.retryAfter == Self.spacing)
        }
        // The operator elsewhere is let through, and that resets nothing of the attacker's.
        #expect(daemons.attempt(1, "198.51.100.20", right: true) == nil)
        #expect(daemons.attempt(2, attacker, right: true)?.status == 429)
        // After the wait, one more try; a wrong one locks again.
        daemons.clock.advance(by: TimeInterval(Self.spacing))
        #expect(daemons.attempt(0, attacker, right: false)?.status == 401)
        #expect(daemons.attempt(1, attacker, right: true)?.status == 429)
    }

    @Test("the right token costs nothing: an operator is never locked out by using it")
    func rightTokenFree() throws {
        let daemons = try Daemons(count: 1)
        for _ in 0..<1_000 { #expect(daemons.attempt(0, "192.0.2.1", right: true) == nil) }
        #expect(daemons.attempt(0, "192.0.2.1", right: false)?.status == 401)
    }

    @Test("on a store one machine serves (SQLite) the count is in the process, with the same figures")
    func local() throws {
        let daemons = try Daemons(count: 1, shared: false)
        let answers = (0..<(Self.budget + 5)).map { _ in daemons.attempt(0, "192.0.2.9", right: false)?.status }
        #expect(answers == Array(repeating: 401, count: Self.budget) + Array(repeating: 429, count: 5))
        #expect(daemons.attempt(0, "192.0.2.9", right: true)?.status == 429)
        #expect(daemons.attempt(0, "192.0.2.10", right: true) == nil)
        #expect(daemons.store.snapshot().clientRate.isEmpty)
    }

    @Test("its count is kept apart from --ip-per-minute's")
    func apartFromTheIPLimit() throws {
        let daemons = try Daemons(count: 1)
        for _ in 0..<Self.budget { _ = daemons.attempt(0, "192.0.2.77", right: false) }
        #expect(daemons.store.snapshot().clientRate.count == 1)
        // The per-minute limit is off in these daemons; its check stores nothing and refuses nothing.
        var refused = false
        do throws(AuthError) { try daemons.services[0].clientLimit.admit(ip: "192.0.2.77") } catch { refused = true }
        #expect(!refused)
    }
}
