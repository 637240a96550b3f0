import Foundation
import PosternCore
import PosternCrypto
import PosternSQL
@testable import PosternStore
import PosternTestSupport
import Testing

@Suite("Housekeeping, on each store")
struct HousekeepingStoreTests {
    static let nowDate = Date(timeIntervalSince1970: TimeInterval(HousekeepingFixture.now))

    /// The rate events `name`'s bucket holds.
    func rateEvents(_ database: TestDatabase, _ name: String) throws -> Int64 {
        try database.withSQL { db in
            try db.first("SELECT count(*) FROM rate_events WHERE bucket = ?", [.blob(Array(name.utf8))]) { $0.integer(0) } ?? -1
        }
    }

    /// The fixed-window counters left, by name.
    func rateWindows(_ database: TestDatabase) throws -> [String] {
        var names: [String] = []
        try database.withSQL { db in
            try db.query("SELECT bucket FROM rate_windows ORDER BY bucket", []) { names.append(String(decoding: $0.blob(0) ?? [], as: UTF8.self)) }
        }
        return names
    }

    /// The client buckets left, by name.
    func clientBuckets(_ database: TestDatabase) throws -> [String] {
        var names: [String] = []
        try database.withSQL { db in
            try db.query("SELECT bucket FROM client_rate ORDER BY bucket", []) { names.append(String(decoding: $0.blob(0) ?? [], as: UTF8.self)) }
        }
        return names
    }

    @Test("a round deletes exactly what reached its horizon, one row either side of each", arguments: StoreKind.available)
    func boundaries(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        try HousekeepingFixture.seed(store)
        let clock = ManualClock(Self.nowDate)
        let housekeeper = Housekeeper(store: store, policy: HousekeepingFixture.policy, clock: clock)
        let round = try housekeeper.runRound()
        for rows in ExpiringRows.allCases { #expect(round.removed[rows] == 1, "\(rows)") }
        #expect(try HousekeepingFixture.survivors(store) == HousekeepingFixture.kept.subtracting(["rate-recent"]))
        #expect(try rateEvents(database, "rate-old") == 0 && rateEvents(database, "rate-recent") == 1)
        #expect(try clientBuckets(database) == ["client-recent"])
        #expect(try rateWindows(database) == ["window-recent"])
        #expect(try store.read { try $0.outboxCounts() }[.queued] == 1, "an unfinished message is never purged, however old")
        clock.advance(by: 1)
        let next = try housekeeper.runRound()
        #expect(next.total == ExpiringRows.allCases.count + 1 && next.removed[.refreshTokens] == 2)
        #expect(try clientBuckets(database).isEmpty)
        #expect(try rateWindows(database).isEmpty)
        #expect(try HousekeepingFixture.survivors(store).isEmpty && rateEvents(database, "rate-recent") == 0)
        #expect(try store.read { try $0.outboxCounts() }[.queued] == 1)
        #expect(try store.read { try $0.webhookDeliveries(state: .queued, limit: 10) }.map(\.webhookID) == ["webhook-queued"])
    }

    @Test("a dead message queued again is not purged, and a purge takes at most its limit", arguments: StoreKind.available)
    func outboxPurge(kind: StoreKind) throws {
        let store = try kind.database().open()
        let address = HousekeepingFixture.address
        var ids: [Int64] = []
        for index in 0..<3 {
            ids.append(try store.write { tx in
                let id = try tx.enqueue(.passwordChanged(uid: "u\(index)"), recipient: address, now: 100, giveUpAt: 10_000)
                _ = try tx.claimDue(.mail, owner: "w", now: 100, leaseUntil: 200, limit: 1)
                _ = try tx.markDead(.mail, id: id, owner: "w", now: 100, reply: "550 no")
                return id
            })
        }
        let requeued = ids[0]
        #expect(try store.write { tx in try tx.retryDead(id: requeued, now: 5000) })
        #expect(try store.write { tx in try tx.purgeFinished(.mail, before: 1000, limit: 1) } == 1)
        #expect(try store.write { tx in try tx.purgeFinished(.mail, before: 1000, limit: 10) } == 1)
        #expect(try store.read { try $0.outboxMessage(id: requeued) }?.state == .queued)
    }

    @Test(
        "on PostgreSQL two rounds at once: one takes the advisory lock, the other skips its round",
        .enabled(if: StoreKind.available.contains(.postgres)))
    func oneRoundAtATime() throws {
        let database = try StoreKind.postgres.database()
        let first = try database.open()
        let second = try database.open()
        try first.write { tx in _ = try tx.consume(nonce: [1], expiresAt: 10) }
        let clock = ManualClock(Self.nowDate)
        let holder = Housekeeper(store: first, policy: RetentionPolicy(), clock: clock)
        let other = Housekeeper(store: second, policy: RetentionPolicy(), clock: clock)
        // The second round starts while the first is between two batches, holding the lock.
        var inner: HousekeepingRound?
        let outer = try holder.runRound(isCancelled: {
            if inner == nil { inner = try? other.runRound() }
            return false
        })
        #expect(inner == HousekeepingRound(skipped: true))
        #expect(!outer.skipped && outer.removed[.consumedCodes] == 1)
        #expect(try !other.runRound().skipped, "the lock is given back when the round ends")
    }

    @Test("SQLite: a new database uses incremental vacuum, an older one is rebuilt to it on open")
    func incrementalVacuumMode() throws {
        let fresh = try TemporaryDatabase()
        _ = try SQLiteStore(path: fresh.path)
        #expect(try SQLiteStore.autoVacuum(SQLiteConnection(path: fresh.path)) == Schema.incrementalAutoVacuum)

        let older = try TemporaryDatabase()
        let made = try SQLiteConnection(path: older.path)
        try made.execute("CREATE TABLE made_before (x INTEGER)")
        #expect(try SQLiteStore.autoVacuum(made) == 0)
        _ = try SQLiteStore(path: older.path)
        #expect(try SQLiteStore.autoVacuum(SQLiteConnection(path: older.path)) == Schema.incrementalAutoVacuum)
    }

    @Test("SQLite: after a round that deleted rows, the freed pages go back to the file system")
    func reclaimsPages() throws {
        let database = try StoreKind.sqlite.database()
        let store = try database.open()
        try database.withSQL { db in
            try db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO consumed_codes SELECT randomblob(32), 10 FROM n"
            )
        }
        func pragma(_ name: String) throws -> Int64 { try database.withSQL { try $0.first("PRAGMA \(name)") { $0.integer(0) } ?? -1 } }
        let pagesBefore = try pragma("page_count")
        let clock = ManualClock(Self.nowDate)
        let keeping = Housekeeper(store: store, policy: RetentionPolicy(), clock: clock, batchSize: 5000, reclaimPages: 0)
        #expect(try keeping.runRound().removed[.consumedCodes] == 20000)
        #expect(try pragma("freelist_count") > 100, "deleted rows leave free pages in the file")
        try store.write { tx in _ = try tx.consume(nonce: [1], expiresAt: 10) }
        let reclaiming = Housekeeper(store: store, policy: RetentionPolicy(), clock: clock, batchSize: 5000)
        #expect(try reclaiming.runRound().removed[.consumedCodes] == 1)
        #expect(try pragma("freelist_count") == 0)
        #expect(try pragma("page_count") < pagesBefore / 2)
    }

    @Test("SQLite: sign-ins complete while housekeeping runs beside them on the same file")
    func signInBesideHousekeeping() throws {
        let h = try StoreFlowHarness(.sqlite)
        try h.database.withSQL { db in
            try db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) INSERT INTO rate_events SELECT randomblob(16), 10 FROM n"
            )
            try db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) INSERT INTO consumed_codes SELECT randomblob(32), 10 FROM n"
            )
        }
        let housekeeper = Housekeeper(store: h.store, policy: RetentionPolicy(), clock: h.clock, batchSize: 100, maximumBatches: 20)
        let signInsDone = Counter()
        let removed = Counter()
        let roundsFailed = Counter()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            // Round after round until the sign-ins are done: every one of them overlaps it.
            while signInsDone.value == 0 {
                do {
                    let round = try housekeeper.runRound()
                    for _ in 0..<round.total { removed.increment() }
                } catch {
                    roundsFailed.increment()
                }
            }
            finished.signal()
        }.start()
        var uids: Set<String> = []
        for index in 0..<20 {
            try h.service.emailLink.send(EmailLinkRequest(email: "user\(index)@example.com"))
            let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
            _ = try h.service.sessions.refresh(login.session.refreshToken)
            uids.insert(login.uid)
        }
        signInsDone.increment()
        finished.wait()
        #expect(uids.count == 20 && roundsFailed.value == 0)
        #expect(removed.value > 0)
        // What the rounds left goes with more (the sign-ins' own rows are live, and stay).
        while try housekeeper.runRound().total > 0 {}
        #expect(try h.database.withSQL { try $0.first("SELECT count(*) FROM rate_events WHERE at = 10") { $0.integer(0) } } == 0)
        #expect(try h.database.withSQL { try $0.first("SELECT count(*) FROM consumed_codes WHERE expires_at = 10") { $0.integer(0) } } == 0)
        #expect(try h.database.withSQL { try $0.first("SELECT count(*) FROM consumed_codes") { $0.integer(0) } } == 20)
    }
}
