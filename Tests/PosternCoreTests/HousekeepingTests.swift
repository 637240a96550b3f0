import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

@Suite("Retention policy")
struct RetentionPolicyTests {
    @Test("each horizon is where the flows stop reading the row")
    func horizons() {
        let policy = RetentionPolicy()
        let now: Int64 = 1_800_000_000
        #expect(policy.horizon(for: .consumedCodes, now: now) == now)
        #expect(policy.horizon(for: .refreshTokens, now: now) == now)
        #expect(policy.horizon(for: .actionRequests, now: now) == now - 3600)
        #expect(policy.horizon(for: .outbox, now: now) == now - 30 * 86_400)
        #expect(policy.horizon(for: .rateEvents, now: now) == now - RateLimitPolicy.window)
        #expect(policy.horizon(for: .guessBudgets, now: now) == now - GuessBudget().forgetAfter)
        #expect(policy.horizon(for: .providerTokenUses, now: now) == now - ProviderTokenVerifier.skew)
    }

    @Test("--retention-days sets the outbox's retention; the guess budget's forget time comes from the flows")
    func fromSettings() throws {
        var settings = Settings()
        settings.retentionDays = 3
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
        config.guessBudget.forgetAfter = 100
        let policy = RetentionPolicy(settings: settings, config: config)
        #expect(policy.horizon(for: .outbox, now: 1_000_000) == 1_000_000 - 3 * 86_400)
        #expect(policy.horizon(for: .guessBudgets, now: 1_000_000) == 1_000_000 - 100)
        #expect(Settings().retentionDays == 30)
    }

    @Test("--retention-seconds beats --retention-days; --action-request-grace moves the requests' horizon")
    func shortRetention() throws {
        let config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
        let settings = try Settings.resolve(
            flags: ["retention-days": "7", "retention-seconds": "600", "action-request-grace": "120", "housekeeping-interval": "5"],
            environment: [:], file: [:])
        let policy = RetentionPolicy(settings: settings, config: config)
        #expect(policy.horizon(for: .outbox, now: 1_000_000) == 1_000_000 - 600)
        #expect(policy.horizon(for: .webhookDeliveries, now: 1_000_000) == 1_000_000 - 600)
        #expect(policy.horizon(for: .actionRequests, now: 1_000_000) == 1_000_000 - 120)
        #expect(settings.housekeepingInterval == 5)
        // Without it the days count, and the defaults stay an hour's grace and a minute's rounds.
        let days = RetentionPolicy(settings: try Settings.resolve(flags: ["retention-days": "7"], environment: [:], file: [:]), config: config)
        #expect(days.horizon(for: .outbox, now: 1_000_000) == 1_000_000 - 7 * 86_400)
        #expect(days.horizon(for: .actionRequests, now: 1_000_000) == 1_000_000 - 3600)
        #expect(Settings().housekeepingInterval == 60)
        // Bounded: a grace under a minute would race the composer; a zero interval would spin.
        for (flag, value) in [("retention-seconds", "59"), ("action-request-grace", "0"), ("housekeeping-interval", "0"), ("housekeeping-interval", "x")] {
            #expect(throws: SettingsError.self) { try Settings.resolve(flags: [flag: value], environment: [:], file: [:]) }
        }
    }

    @Test("--retention-days and POSTERN_RETENTION_DAYS are bounded")
    func settingBounds() throws {
        #expect(try Settings.resolve(flags: ["retention-days": "7"], environment: [:], file: [:]).retentionDays == 7)
        #expect(try Settings.resolve(flags: [:], environment: ["POSTERN_RETENTION_DAYS": "90"], file: [:]).retentionDays == 90)
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["retention-days": "0"], environment: [:], file: [:]) }
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["retention-days": "3651"], environment: [:], file: [:]) }
    }
}

@Suite("Housekeeping")
struct HousekeeperTests {
    @Test("a round deletes exactly what reached its horizon, one row either side of each")
    func boundaries() throws {
        let store = InMemoryStore()
        try HousekeepingFixture.seed(store)
        let clock = ManualClock(Date(timeIntervalSince1970: TimeInterval(HousekeepingFixture.now)))
        let metrics = HousekeepingMetrics()
        let round = try Housekeeper(store: store, policy: HousekeepingFixture.policy, clock: clock, metrics: metrics).runRound()
        #expect(try HousekeepingFixture.survivors(store) == HousekeepingFixture.kept.subtracting(["rate-recent"]))
        #expect(store.snapshot().rateEvents.keys.map { String(decoding: $0, as: UTF8.self) } == ["rate-recent"])
        #expect(store.snapshot().clientRate.keys.map { String(decoding: $0, as: UTF8.self) } == ["client-recent"])
        #expect(store.snapshot().rateWindows.keys.map { String(decoding: $0, as: UTF8.self) } == ["window-recent"])
        #expect(try store.read { try $0.outboxCounts() }[.queued] == 1, "an unfinished message is never purged, however old")
        for rows in ExpiringRows.allCases { #expect(round.removed[rows] == 1, "\(rows)") }
        #expect(!round.skipped && !round.unfinished && round.total == ExpiringRows.allCases.count)
        #expect(metrics.snapshot().allSatisfy { $0.count == 1 })
        // A second later the rows that stayed are at their horizon: they go, and nothing else is left.
        clock.advance(by: 1)
        let next = try Housekeeper(store: store, policy: HousekeepingFixture.policy, clock: clock, metrics: metrics).runRound()
        // Each kind's row that stayed, and the second refresh token.
        #expect(next.removed[.refreshTokens] == 2 && next.total == ExpiringRows.allCases.count + 1)
        #expect(store.snapshot().clientRate.isEmpty && store.snapshot().rateWindows.isEmpty)
        #expect(try HousekeepingFixture.survivors(store).isEmpty)
        #expect(metrics.snapshot().first { $0.rows == .refreshTokens }?.count == 3)
    }

    @Test("what is due to settle runs first; when it throws, the deletes still run and the error comes after them")
    func settleDueFirstAndFailureLast() throws {
        struct Refused: Error {}
        let store = InMemoryStore()
        try HousekeepingFixture.seed(store)
        let clock = ManualClock(Date(timeIntervalSince1970: TimeInterval(HousekeepingFixture.now)))
        let settled = try Housekeeper(store: store, policy: HousekeepingFixture.policy, clock: clock, settleDue: { (moved: 2, failed: 1) })
            .runRound()
        #expect(settled.settledTransfers == 2 && settled.unsettledTransfers == 1 && settled.total > 0)
        let failing = InMemoryStore()
        try HousekeepingFixture.seed(failing)
        #expect(throws: Refused.self) {
            _ = try Housekeeper(store: failing, policy: HousekeepingFixture.policy, clock: clock, settleDue: { throw Refused() }).runRound()
        }
        #expect(try HousekeepingFixture.survivors(failing) == HousekeepingFixture.kept.subtracting(["rate-recent"]))
    }

    @Test("rows go in batches of batchSize, at most maximumBatches per kind per round")
    func batches() throws {
        let store = InMemoryStore()
        try store.write { tx in
            for index in 0..<7 { _ = try tx.consume(nonce: [UInt8(index)], expiresAt: 100) }
        }
        let clock = ManualClock(Date(timeIntervalSince1970: 1000))
        let limited = Housekeeper(store: store, policy: RetentionPolicy(), clock: clock, batchSize: 2, maximumBatches: 3)
        let first = try limited.runRound()
        #expect(first.removed[.consumedCodes] == 6 && first.unfinished)
        let second = try limited.runRound()
        #expect(second.removed[.consumedCodes] == 1 && !second.unfinished)
        #expect(store.snapshot().consumed.isEmpty)
    }

    @Test("a round that is cancelled stops before its next batch")
    func cancelled() throws {
        let store = InMemoryStore()
        try store.write { tx in
            for index in 0..<4 { _ = try tx.consume(nonce: [UInt8(index)], expiresAt: 100) }
        }
        let housekeeper = Housekeeper(store: store, policy: RetentionPolicy(), clock: ManualClock(Date(timeIntervalSince1970: 1000)), batchSize: 1)
        // Stopping once two are gone: the round ends before a third batch.
        let round = try housekeeper.runRound(isCancelled: { store.snapshot().consumed.count <= 2 })
        #expect(round.total == 2 && round.unfinished)
        #expect(store.snapshot().consumed.count == 2)
    }

    @Test("a consumed code replayed just before its expiry is still refused after a round; at its expiry its entry goes")
    func replayBeforeExpiry() throws {
        let h = try FlowHarness()
        let link = try h.usedLink("a@example.com")
        let housekeeper = Housekeeper(store: h.store, policy: RetentionPolicy(), clock: h.clock)
        // The sign-in link lives 600 s: one second before it expires.
        h.clock.advance(by: 599)
        #expect(try housekeeper.runRound().removed[.consumedCodes] == 0)
        #expect(h.store.snapshot().consumed.count == 1, "the ledger keeps the entry until the code expires")
        expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        h.clock.advance(by: 1)
        #expect(try housekeeper.runRound().removed[.consumedCodes] == 1)
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
    }

    @Test("a provider's ID token stays in the replay ledger while the verifier's skew still accepts it, and goes once it is refused as expired")
    func providerTokenUseKeptThroughSkew() throws {
        let store = InMemoryStore()
        let exp: Int64 = 1_800_000_000
        let hash = Array(repeating: UInt8(7), count: 32)
        #expect(try store.write { try $0.useProviderToken(hash: hash, expiresAt: exp) })
        // The verifier accepts the token while exp > now - skew: the last second of that is exp + skew - 1.
        let clock = ManualClock(Date(timeIntervalSince1970: TimeInterval(exp + ProviderTokenVerifier.skew - 1)))
        let housekeeper = Housekeeper(store: store, policy: RetentionPolicy(), clock: clock)
        #expect(try housekeeper.runRound().removed[.providerTokenUses] == 0)
        #expect(try store.write { try $0.useProviderToken(hash: hash, expiresAt: exp) } == false, "still a replay")
        clock.advance(by: 1)
        #expect(try housekeeper.runRound().removed[.providerTokenUses] == 1)
        #expect(store.snapshot().providerTokenUses.isEmpty)
    }

    @Test("a rotated refresh token inside its grace still gets its successor after a round; after the grace its replay still revokes the family")
    func rotatedTokens() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        let housekeeper = Housekeeper(store: h.store, policy: RetentionPolicy(), clock: h.clock)
        let next = try h.service.sessions.refresh(login.session.refreshToken)
        h.clock.advance(by: 10)
        _ = try housekeeper.runRound()
        #expect(try h.service.sessions.refresh(login.session.refreshToken).refreshToken == next.refreshToken)
        // Past the grace (30 s): the rotated token is still there, so presenting it is a replay.
        h.clock.advance(by: 3600)
        #expect(try housekeeper.runRound().removed[.refreshTokens] == 0)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(next.refreshToken) }
        // At their expiry every token of the family goes.
        h.clock.advance(by: 30 * 86_400)
        #expect(try housekeeper.runRound().removed[.refreshTokens] == 2)
        #expect(h.store.snapshot().refreshTokens.isEmpty)
    }
}
