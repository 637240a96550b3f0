import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

@Suite("Per-client-IP limit")
struct ClientLimitTests {
    @Test("the rate arithmetic: a burst of perMinute, then one every 60/perMinute seconds; a refusal moves nothing")
    func policy() {
        var tat: Int64? = nil
        for _ in 0..<3 {
            let decision = ClientRatePolicy.decide(tat: tat, now: 0, perMinute: 3)
            #expect(decision.retryAfter == nil)
            tat = decision.tat
        }
        #expect(tat == 60_000)
        let refused = ClientRatePolicy.decide(tat: tat, now: 0, perMinute: 3)
        #expect(refused.tat == nil && refused.retryAfter == 20)
        #expect(ClientRatePolicy.decide(tat: tat, now: 19_999, perMinute: 3).retryAfter == 1)
        #expect(ClientRatePolicy.decide(tat: tat, now: 20_000, perMinute: 3).tat == 80_000)
        // A quiet client is full again: its stale time counts as now.
        #expect(ClientRatePolicy.decide(tat: 5, now: 1_000_000, perMinute: 3).tat == 1_020_000)
        // Limits over 60,000 a minute still step by 1 ms.
        #expect(ClientRatePolicy.step(perMinute: 1_000_000) == 1)
    }

    /// Three daemons (three services, each its own cache) on one store several machines share
    /// (as PostgreSQL), and a manual clock.
    struct Daemons {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store: InMemoryStore
        let services: [AuthService]

        init(perMinute: Int64, count: Int = 3, shared: Bool = true) throws {
            store = InMemoryStore(confinedToThisMachine: !shared)
            let vault = KeyVault(
                store: store, box: try SecretBox(key: Array(repeating: 7, count: 32)), clock: clock, maxCodeLifetime: 86_400)
            var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
            config.ipPerMinute = perMinute
            let (store, clock) = (store, clock)
            services = try (0..<count).map { _ in
                try AuthService(store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config, hasher: .fastForTests)
            }
        }

        func admit(_ daemon: Int, _ ip: String) -> Int64? {
            do throws(AuthError) {
                try services[daemon].clientLimit.admit(ip: ip)
                return nil
            } catch {
                #expect(error.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
                return error.details["retryAfter"].flatMap { Int64($0) } ?? -1
            }
        }
    }

    @Test("one client spread over three daemons gets one limit, not three")
    func sharedAcrossDaemons() throws {
        let daemons = try Daemons(perMinute: 6)
        let answers = (0..<18).map { daemons.admit($0 % 3, "203.0.113.9") }
        #expect(answers.filter { $0 == nil }.count == 6)
        #expect(answers.dropFirst(6).allSatisfy { $0 == 10 })
        // Another client is not affected.
        #expect(daemons.admit(1, "203.0.113.10") == nil)
        // After 10 s one more fits, on whichever daemon it reaches.
        daemons.clock.advance(by: 10)
        #expect(daemons.admit(2, "203.0.113.9") == nil)
        #expect(daemons.admit(0, "203.0.113.9") != nil)
    }

    @Test("the daemon's memory is a cache of refusals: no store write while it lasts, and a daemon without it asks the store")
    func cacheOfRefusals() throws {
        let daemons = try Daemons(perMinute: 2)
        #expect(daemons.admit(0, "198.51.100.1") == nil && daemons.admit(0, "198.51.100.1") == nil)
        #expect(daemons.admit(0, "198.51.100.1") == 30)
        let stored = daemons.store.snapshot().clientRate
        // Refused from the cache: the stored row does not move.
        for _ in 0..<50 { #expect(daemons.admit(0, "198.51.100.1") != nil) }
        #expect(daemons.store.snapshot().clientRate == stored)
        // A daemon that never saw the client (or lost its cache in a restart) gets the store's answer.
        #expect(daemons.admit(1, "198.51.100.1") == 30)
        daemons.clock.advance(by: 30)
        #expect(daemons.admit(0, "198.51.100.1") == nil)
        #expect(daemons.admit(1, "198.51.100.1") != nil)
    }

    @Test("the store holds no client address: the bucket is a keyed hash")
    func noAddressStored() throws {
        let daemons = try Daemons(perMinute: 5)
        #expect(daemons.admit(0, "192.0.2.44") == nil)
        let buckets = Array(daemons.store.snapshot().clientRate.keys)
        #expect(buckets.count == 1 && buckets[0].count == 16)
        let text = Array("192.0.2.44".utf8)
        #expect(!buckets[0].indices.contains { start in Array(buckets[0][start...].prefix(text.count)) == text })
    }

    @Test("on a store one machine serves (SQLite) the count is in the process: the same limit, no store write")
    func localToTheProcess() throws {
        let daemons = try Daemons(perMinute: 3, count: 2, shared: false)
        #expect((0..<5).map { _ in daemons.admit(0, "192.0.2.8") } == [nil, nil, nil, 20, 20])
        #expect(daemons.store.snapshot().clientRate.isEmpty)
        // Each process counts its own there (documented): the other has its full burst.
        #expect(daemons.admit(1, "192.0.2.8") == nil)
        daemons.clock.advance(by: 20)
        #expect(daemons.admit(0, "192.0.2.8") == nil && daemons.admit(0, "192.0.2.8") == 20)
    }

    @Test("a limit of 0 counts nothing")
    func off() throws {
        let daemons = try Daemons(perMinute: 0, count: 1)
        for _ in 0..<1_000 { #expect(daemons.admit(0, "192.0.2.1") == nil) }
        #expect(daemons.store.snapshot().clientRate.isEmpty)
    }
}
