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
        // Limits over 60,000 a minute still step by one tick (ClientLimit counts in microseconds).
        #expect(ClientRatePolicy.step(perMinute: 1_000_000) == 1)
        #expect(ClientRatePolicy.step(allowed: 1_000_000, window: 60_000_000) == 60)
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

    /// Requests the store has counted against the one bucket at the clock's now (steps of its `tat`, in µs, past now).
    func counted(_ daemons: Daemons, perMinute: Int64) -> Int64 {
        let tat = daemons.store.snapshot().clientRate.values.first ?? 0
        let now = Int64(daemons.clock.now().timeIntervalSince1970 * 1_000_000)
        return max(0, tat - now) / ClientRatePolicy.step(allowed: perMinute, window: 60_000_000)
    }

    @Test("a busy client spends slices in memory: each take doubles up to 1/32 of the limit, and what it did not spend goes back")
    func leases() throws {
        // 3,200 a minute: a step of 18,750 µs, slices up to 100.
        let daemons = try Daemons(perMinute: 3_200, count: 1)
        #expect(ClientLimit.maxSlice(allowed: 3_200) == 100)
        for _ in 0..<500 { #expect(daemons.admit(0, "203.0.113.7") == nil) }
        // Taken 1, 2, 4, … 64 (127), then 100 four times: 527 counted for 500 spent.
        #expect(counted(daemons, perMinute: 3_200) == 527)
        // Before the lease ends nothing goes back; after it, the 27 do.
        #expect(try daemons.services[0].clientLimit.returnUnused() == 0)
        daemons.clock.advance(by: 1)
        #expect(try daemons.services[0].clientLimit.returnUnused() == 27)
        #expect(daemons.store.snapshot().clientRate.values.first == Int64(1_800_000_000_000_000) + 500 * 18_750)
        #expect(try daemons.services[0].clientLimit.returnUnused() == 0, "given back once")
        // The next take asks for what the last lease spent (73), not for more.
        #expect(daemons.admit(0, "203.0.113.7") == nil)
        #expect(daemons.store.snapshot().clientRate.values.first == Int64(1_800_000_000_000_000) + (500 + 73) * 18_750)
    }

    @Test("a limit under 64 is counted request by request: no lease, no slack")
    func smallLimitsAreExact() throws {
        #expect(ClientLimit.maxSlice(allowed: 63) == 1 && ClientLimit.maxSlice(allowed: 10) == 1)
        let daemons = try Daemons(perMinute: 40)
        let answers = (0..<60).map { daemons.admit($0 % 3, "198.51.100.40") }
        #expect(answers.prefix(40).allSatisfy { $0 == nil } && answers.dropFirst(40).allSatisfy { $0 != nil })
        #expect(try daemons.services.map { try $0.clientLimit.returnUnused(all: true) } == [0, 0, 0])
    }

    @Test("a client that moves to another daemon finds there what the first one took and did not spend, once it went back")
    func unusedGoesBack() throws {
        // 320 a minute: slices up to 10.
        let daemons = try Daemons(perMinute: 320)
        for _ in 0..<20 { #expect(daemons.admit(0, "192.0.2.77") == nil) }  // took 1, 2, 4, 8, 10: 25 for 20
        var elsewhere = 0
        while daemons.admit(1, "192.0.2.77") == nil { elsewhere += 1 }
        #expect(elsewhere == 320 - 25, "the 5 held by daemon 0 are not there yet")
        // Daemon 0 stops (or its lease ends): the 5 go back, and a daemon that has not refused the client finds them.
        #expect(try daemons.services[0].clientLimit.returnUnused(all: true) == 5)
        #expect((0..<6).map { _ in daemons.admit(2, "192.0.2.77") }.filter { $0 == nil }.count == 5)
    }

    @Test("one client hammering three daemons for 10 s: within one slice per daemon of one exact limit")
    func exactWithinSlices() throws {
        // 6,000 a minute: a step of 10 ms, slices up to 187.
        let perMinute: Int64 = 6_000
        let daemons = try Daemons(perMinute: perMinute)
        let slack = 3 * ClientLimit.maxSlice(allowed: perMinute)
        var exactTAT: Int64? = nil
        var (admitted, exact) = (Int64(0), Int64(0))
        var (first, last) = (Int64?.none, Int64(0))
        // Rounds of 50 ms, 20 requests to each daemon (1,200 a second against 100 a second refill); the leases go back each second.
        for round in 1...200 {
            let now = Int64((daemons.clock.now().timeIntervalSince1970 * 1000).rounded(.down))
            (first, last) = (first ?? now, now)
            for daemon in 0..<3 {
                for _ in 0..<20 {
                    if daemons.admit(daemon, "203.0.113.99") == nil { admitted += 1 }
                    let decision = ClientRatePolicy.decide(tat: exactTAT, now: now, perMinute: perMinute)
                    if let tat = decision.tat { exactTAT = tat; exact += 1 }
                    // Never more than the exact limit plus a slice per daemon, at any moment.
                    #expect(admitted <= exact + slack)
                }
            }
            daemons.clock.advance(by: 0.05)
            if round % 20 == 0 { for service in daemons.services { _ = try service.clientLimit.returnUnused() } }
        }
        #expect(exact == (last - (first ?? 0) + 60_000) / 10, "the exact limit: a burst of 6,000, then one each 10 ms to the last round")
        // And not much less: a slice per daemon, and the refusals each daemon caches for up to a
        // second (its wait in whole seconds) while the bucket refills 100 a second.
        #expect(admitted >= exact - slack - 3 * 100, "admitted \(admitted) of \(exact)")
    }

    @Test("a limit above 60,000 a minute is counted in microseconds: the whole burst, then two a millisecond at 120,000 a minute",
          arguments: [true, false])
    func aboveAThousandASecond(shared: Bool) throws {
        let daemons = try Daemons(perMinute: 120_000, count: 1, shared: shared)
        var admitted = 0
        while daemons.admit(0, "198.51.100.120") == nil { admitted += 1 }
        #expect(admitted == 120_000, "in milliseconds the burst was 60,000 and the rate 1,000 a second")
        _ = try daemons.services[0].clientLimit.returnUnused(all: true)
        // The refusal is cached for its whole second; after it, 2,000 more.
        daemons.clock.advance(by: 1)
        admitted = 0
        while daemons.admit(0, "198.51.100.120") == nil { admitted += 1 }
        #expect(admitted == 2_000)
    }

    @Test("a limit of 0 counts nothing")
    func off() throws {
        let daemons = try Daemons(perMinute: 0, count: 1)
        for _ in 0..<1_000 { #expect(daemons.admit(0, "192.0.2.1") == nil) }
        #expect(daemons.store.snapshot().clientRate.isEmpty)
    }
}
