import Foundation
import PosternCore
@testable import PosternStore
import PosternSQL
import Synchronization
import PosternTestSupport
import Testing

@Suite("SQLite outbox")
struct SQLiteOutboxTests {
    let database: TemporaryDatabase
    let store: SQLiteStore
    let alice = EmailAddress.restored(localPart: "Alice", domain: "example.com")

    init() throws {
        database = try TemporaryDatabase()
        store = try SQLiteStore(path: database.path)
    }

    func mail(_ token: String) -> OutgoingMail {
        OutgoingMail(
            storedMessageID: "<\(token)@example.com>",
            envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["Alice@example.com", "cc@example.com"]),
            bytes: Array("Subject: \(token)\r\n\r\n.leading dot\r\n".utf8) + [0, 255])
    }

    func enqueue(_ count: Int, now: Int64 = 100, giveUpAt: Int64 = 10_000) throws -> [Int64] {
        let recipient = alice
        return try store.write { writer in
            try (0..<count).map { try writer.enqueue(.signIn(requestID: "r\($0)"), recipient: recipient, now: now, giveUpAt: giveUpAt) }
        }
    }

    /// The raw body column, to check it is erased.
    func storedBody(_ id: Int64) throws -> [UInt8]? {
        let db = try SQLiteConnection(path: database.path)
        return try db.first("SELECT body FROM outbox WHERE id = ?", [.integer(id)]) { $0.blob(0) } ?? nil
    }

    @Test("the due query uses the partial index")
    func duePlanUsesIndex() throws {
        let db = try SQLiteConnection(path: database.path)
        var plan: [String] = []
        try db.query(
            "EXPLAIN QUERY PLAN SELECT id FROM outbox WHERE \(SQLStoreTransaction.unfinished) AND next_attempt_at <= 5 ORDER BY next_attempt_at, id LIMIT 8"
        ) { plan.append($0.text(3) ?? "") }
        #expect(plan.contains { $0.contains("outbox_due") })
        for sql in [
            "UPDATE outbox SET next_attempt_at = 1 WHERE \(SQLStoreTransaction.unfinished) AND state = 'claimed' AND lease_owner = 'w'",
            "SELECT count(*) FROM outbox WHERE \(SQLStoreTransaction.unfinished)",
        ] {
            var steps: [String] = []
            try db.query("EXPLAIN QUERY PLAN " + sql) { steps.append($0.text(3) ?? "") }
            #expect(steps.contains { $0.contains("outbox_due") }, "\(sql): \(steps)")
        }
    }

    @Test("the statements run once per message build no temporary b-tree (an IN list of constants would)")
    func perMessageStatementsHaveNoEphemeralTables() throws {
        let db = try SQLiteConnection(path: database.path)
        let tx = SQLStoreTransaction(db)
        try db.execute("BEGIN IMMEDIATE")
        let now: Int64 = 100
        let request = ActionRequest(
            id: "req", purpose: .signIn, email: alice, uid: nil, continueURL: nil, locale: nil, codeChallenge: nil,
            createdAt: now, expiresAt: now + 600, sixDigitKeyID: 1)
        try tx.insertActionRequest(request)
        var ids: [Int64] = []
        for n in 0..<4 { ids.append(try tx.enqueue(.signIn(requestID: "r\(n)"), recipient: alice, now: now, giveUpAt: now + 600)) }
        let perBatch = Set(db.preparedSQL)
        _ = try tx.claimDue(.mail, owner: "w", now: now, leaseUntil: now + 60, limit: 4)
        // Renewing a batch's leases updates the indexed column of several rows: per batch, rarely.
        try tx.extendLeases(owner: "w", leaseUntil: now + 120)
        let claimSQL = Set(db.preparedSQL).subtracting(perBatch)
        #expect(try tx.storeMail(id: ids[0], owner: "w", mail: mail("a")))
        #expect(try tx.markSent(.mail, id: ids[0], owner: "w", now: now, reply: "250 ok"))
        #expect(try tx.markRetry(.mail, id: ids[1], owner: "w", at: now + 30, reply: "451 later"))
        #expect(try tx.markDead(.mail, id: ids[2], owner: "w", now: now, reply: "550 no"))
        // The delivery log's row of each attempt (its CHECK was an IN list until migration 17).
        try tx.recordOutboxAttempt(
            OutboxAttempt(
                messageID: ids[0], recipientHash: [1, 2], attemptedAt: now, durationMilliseconds: 3, transport: "smtp://sink",
                replyCode: 250, reply: "250 ok", outcome: .sent))
        try db.execute("COMMIT")

        // The claim and the renewal run once per batch, and need the temporary table.
        let perMessage = Set(db.preparedSQL).subtracting(claimSQL).filter { !$0.hasPrefix("BEGIN") && !$0.hasPrefix("COMMIT") }
        #expect(perMessage.count >= 8)
        #expect(perMessage.contains { $0.contains("INSERT INTO outbox_attempts") })
        for sql in perMessage {
            var opcodes: [String] = []
            try db.query("EXPLAIN " + sql, Array(repeating: .null, count: sql.filter { $0 == "?" }.count)) { opcodes.append($0.text(1) ?? "") }
            #expect(!opcodes.isEmpty)
            #expect(!opcodes.contains("OpenEphemeral"), "\(sql)")
        }
    }

    @Test("no CHECK or index condition of the schema is an IN list of three or more constants")
    func schemaHasNoConstantLists() throws {
        #expect(try store.schemaVersion() == Schema.migrations.count)
        let db = try SQLiteConnection(path: database.path)
        var schema: [String] = []
        try db.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL") { schema.append($0.text(0) ?? "") }
        #expect(schema.count > 20)
        let list = try NSRegularExpression(pattern: #"\bIN\s*\(\s*'[^']*'\s*(,\s*'[^']*'\s*){2,}\)"#, options: [.caseInsensitive])
        // The pattern finds what it must: migration 11's CHECK, as it was.
        let old = "outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'deferred', 'failed'))"
        #expect(list.firstMatch(in: old, range: NSRange(old.startIndex..., in: old)) != nil)
        for sql in schema {
            #expect(list.firstMatch(in: sql, range: NSRange(sql.startIndex..., in: sql)) == nil, "\(sql)")
        }
    }

    /// A new database file with the first `version` migrations run and recorded, as an older
    /// Postern left it.
    static func database(atSchema version: Int) throws -> (TemporaryDatabase, SQLiteConnection) {
        let old = try TemporaryDatabase()
        let db = try SQLiteConnection(path: old.path)
        for sql in Schema.migrations.prefix(version) { try db.execute(sql) }
        try db.execute("PRAGMA user_version = \(version)")
        return (old, db)
    }

    /// The names of the delivery log's indexes, sorted.
    /// Writes delivery-log rows straight into an old schema's table: `rows` are the VALUES tuples
    /// (id, message_id, recipient_hash, attempted_at, duration_ms, transport, reply_code, reply, outcome).
    static func insertAttempts(_ db: SQLiteConnection, _ rows: String) throws {
        try db.execute(
            "INSERT INTO outbox_attempts (id, message_id, recipient_hash, attempted_at, duration_ms, transport, reply_code, reply, outcome) VALUES "
                + rows)
    }

    static func deliveryLogIndexes(_ db: SQLiteConnection) throws -> [String] {
        var names: [String] = []
        try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox_attempts' ORDER BY name") {
            names.append($0.text(0) ?? "")
        }
        return names
    }

    @Test("the delivery log of schema 16 is rebuilt by migration 17 with every row, column and index kept (but the one 18 drops), and its CHECK")
    func deliveryLogRebuildKeepsRows() throws {
        let (old, db) = try Self.database(atSchema: 16)
        try Self.insertAttempts(db, """
            (3, 7, x'0102', 100, 12, 'smtp://mail.example:587', 451, '451 later', 'deferred'),
            (4, 7, x'0102', 130, 9, 'smtp://mail.example:587', 250, '250 ok', 'sent'),
            (9, 8, x'ff', 140, 0, 'file:', NULL, 'curl error 7', 'failed')
            """)
        let columns = "SELECT * FROM outbox_attempts ORDER BY id"
        var before: [[String]] = []
        try db.query(columns) { row in before.append((0..<9).map { row.text(Int32($0)) ?? "NULL" }) }
        let indexesBefore = try Self.deliveryLogIndexes(db)

        let migrated = try SQLiteStore(path: old.path)
        #expect(try migrated.schemaVersion() == Schema.migrations.count)
        let reader = try SQLiteConnection(path: old.path)
        var after: [[String]] = []
        try reader.query(columns) { row in after.append((0..<9).map { row.text(Int32($0)) ?? "NULL" }) }
        #expect(after == before)
        #expect(after.count == 3)
        let indexesAfter = try Self.deliveryLogIndexes(reader)
        // Migration 18 then drops the index on the recipient's hash.
        #expect(indexesAfter == indexesBefore.filter { $0 != "outbox_attempts_recipient" })
        #expect(indexesAfter.count == 2)
        #expect(try migrated.read { try $0.outboxAttempts(messageID: 7) }.map(\.outcome) == [.deferred, .sent])
        #expect(throws: (any Error).self) {
            try reader.execute("UPDATE outbox_attempts SET outcome = 'lost' WHERE id = 4")
        }
    }

    @Test("migration 18 drops the recipient-hash index, and a recipient's messages are still found: newest first, each once, at most the limit, no other recipient's")
    func deliveryLogWithoutRecipientIndex() throws {
        let (old, db) = try Self.database(atSchema: 17)
        // Message 7 tried twice, 8 and 12 once, all to x'0102'; 9 to another recipient, logged last.
        try Self.insertAttempts(db, """
            (3, 7, x'0102', 100, 12, 'smtp://mail.example:587', 451, '451 later', 'deferred'),
            (4, 8, x'0102', 110, 9, 'smtp://mail.example:587', 250, '250 ok', 'sent'),
            (5, 7, x'0102', 130, 9, 'smtp://mail.example:587', 250, '250 ok', 'sent'),
            (6, 12, x'0102', 140, 9, 'smtp://mail.example:587', 250, '250 ok', 'sent'),
            (7, 9, x'010203', 150, 0, 'file:', NULL, 'curl error 7', 'failed')
            """)
        let migrated = try SQLiteStore(path: old.path)
        #expect(try migrated.schemaVersion() == Schema.migrations.count)
        let reader = try SQLiteConnection(path: old.path)
        #expect(try Self.deliveryLogIndexes(reader) == ["outbox_attempts_message", "outbox_attempts_time"])
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1, 2], limit: 10) } == [12, 8, 7])
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1, 2], limit: 2) } == [12, 8])
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1, 2, 3], limit: 10) } == [9])
        // A prefix of a hash is not the hash.
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1], limit: 10) }.isEmpty)
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1, 2], limit: 0) }.isEmpty)
        // A new attempt is found as before the migration.
        try migrated.write {
            try $0.recordOutboxAttempt(
                OutboxAttempt(
                    messageID: 13, recipientHash: [1, 2], attemptedAt: 160, durationMilliseconds: 3, transport: "file:", replyCode: nil,
                    reply: "written", outcome: .sent))
        }
        #expect(try migrated.read { try $0.outboxMessageIDs(recipientHash: [1, 2], limit: 1) } == [13])
    }

    @Test("an outbox of schema 2 is rebuilt by migration 3 with every row and column kept")
    func outboxRebuildKeepsRows() throws {
        let (old, db) = try Self.database(atSchema: 2)
        try db.execute(
            """
            INSERT INTO outbox (id, intent, recipient_local, recipient_domain, recipient_normalized, state, attempts,
                next_attempt_at, lease_owner, created_at, give_up_at, finished_at, last_reply, message_id,
                envelope_sender, envelope_recipients, body)
            VALUES (7, 'sign-in:r1', 'Alice', 'example.com', 'alice@example.com', 'claimed', 2, 130, 'w1', 100, 900,
                NULL, '451 later', '<m@example.com>', 'no-reply@example.com', 'Alice@example.com', x'00ff'),
                (8, 'sign-in:r2', 'Bob', 'example.com', 'bob@example.com', 'sent', 1, 100, NULL, 100, 900, 120, '250 ok',
                '<n@example.com>', NULL, NULL, NULL)
            """)
        let columns = "SELECT * FROM outbox ORDER BY id"
        var before: [[String]] = []
        try db.query(columns) { row in before.append((0..<17).map { row.text(Int32($0)) ?? "NULL" }) }

        let migrated = try SQLiteStore(path: old.path)
        #expect(try migrated.schemaVersion() == Schema.migrations.count)
        var after: [[String]] = []
        let reader = try SQLiteConnection(path: old.path)
        try reader.query(columns) { row in after.append((0..<17).map { row.text(Int32($0)) ?? "NULL" }) }
        #expect(after == before)
        #expect(after.count == 2)
        // The claimed message is still claimable once its lease ends, through the rebuilt index.
        let claims = try migrated.write { try $0.claimDue(.mail, owner: "w2", now: 130, leaseUntil: 190, limit: 4) }
        #expect(claims.map(\.message.id) == [7])
        #expect(claims.first?.mail?.bytes == [0, 255])
        #expect(throws: (any Error).self) {
            try reader.execute("UPDATE outbox SET state = 'lost' WHERE id = 8")
        }
    }

    @Test("a write that may sync later is committed at once, and flushed by the next full commit or within the interval")
    func writeSyncingLater() throws {
        // The writer's interval runs on a manual clock: the test moves it, and waits for the
        // writer to act on the move (back in its wait, nothing overdue) instead of sleeping.
        let clock = ManualMonotonicClock()
        // No background checkpointer: its checkpoint, on real time, could make a flush on the
        // manual clock busy and move it.
        let store = try SQLiteStore(path: database.path, clock: clock, phoneSeal: PhoneSealSlot(), backgroundCheckpoints: false)
        let recipient = alice
        let ids = try store.write { writer in
            try (0..<3).map { try writer.enqueue(.signIn(requestID: "r\($0)"), recipient: recipient, now: 100, giveUpAt: 10_000) }
        }
        let start = store.commitCounts
        _ = try store.writeSyncingLater { try $0.claimDue(.mail, owner: "w", now: 100, leaseUntil: 160, limit: 1) }
        // Committed: another connection sees the claim at once.
        let other = try SQLiteStore(path: database.path)
        #expect(try other.read { try $0.outboxMessage(id: ids[0]) }?.state == .claimed)
        var counts = store.commitCounts
        #expect(counts.deferred == start.deferred + 1)
        #expect(counts.synced == start.synced)
        // Short of the interval nothing is flushed.
        #expect(clock.waitUntilSettled(waiters: 1))
        clock.advance(by: GroupCommitWriter.syncInterval / 2)
        #expect(clock.waitUntilSettled(waiters: 1))
        #expect(store.commitCounts.flushes == start.flushes)
        // Nothing else to do: a checkpoint flushes it within the interval.
        clock.advance(by: GroupCommitWriter.syncInterval * 2)
        #expect(clock.waitUntilSettled(waiters: 1))
        counts = store.commitCounts
        #expect(counts.flushes == start.flushes + 1)

        // A full commit flushes what came before it, so no checkpoint is needed after it.
        _ = try store.writeSyncingLater { try $0.claimDue(.mail, owner: "w", now: 100, leaseUntil: 160, limit: 1) }
        _ = try store.write { try $0.claimDue(.mail, owner: "w", now: 100, leaseUntil: 160, limit: 1) }
        #expect(clock.waitUntilSettled(waiters: 1))
        clock.advance(by: GroupCommitWriter.syncInterval * 2.5)
        #expect(clock.waitUntilSettled(waiters: 1))
        let after = store.commitCounts
        #expect(after.flushes == counts.flushes)
        #expect(after.synced == counts.synced + 1)
        #expect(after.deferred == counts.deferred + 1)
    }

    @Test("a steady stream of writes that may sync later still reaches the disk every interval")
    func steadyDeferredWritesAreSynced() throws {
        // Three intervals of writes on a manual clock moved a tenth of the interval per write: the
        // writer reads the clock at each commit, so the count of full commits does not depend on
        // how fast this machine is.
        let clock = ManualMonotonicClock()
        // No background checkpointer: its checkpoint, on real time, could make a flush on the
        // manual clock busy and move it.
        let store = try SQLiteStore(path: database.path, clock: clock, phoneSeal: PhoneSealSlot(), backgroundCheckpoints: false)
        let start = store.commitCounts
        let until = clock.now() + GroupCommitWriter.syncInterval * 3
        var writes = 0
        let recipient = alice
        while clock.now() < until {
            _ = try store.writeSyncingLater { try $0.enqueue(.signIn(requestID: "r"), recipient: recipient, now: 100, giveUpAt: 900) }
            writes += 1
            clock.advance(by: GroupCommitWriter.syncInterval / 10)
        }
        #expect(try store.read { try $0.outboxCounts() }.byState[.queued] == writes)
        let counts = store.commitCounts
        #expect(counts.deferred - start.deferred > 0)
        // At least one commit in every interval was full (or a checkpoint ran): never 3 intervals unsynced.
        #expect((counts.synced - start.synced) + (counts.flushes - start.flushes) >= 2, "\(writes) writes: \(counts)")
    }

    @Test("gathering writes share one commit: the writer holds them for more, up to 8 or the gathering wait, and any other write ends the wait")
    func gatheringWrites() throws {
        // A manual clock: the gathering wait ends only when the test moves it. Each "not yet"
        // below waits until the writer has woken for the new write and is parked on the clock
        // again, short of its deadline: a writer that did not hold the write would have
        // committed it (and reported it done) before it parked.
        let clock = ManualMonotonicClock()
        let store = try SQLiteStore(path: database.path, clock: clock, phoneSeal: PhoneSealSlot(), backgroundCheckpoints: false)
        let done = Atomic<Int>(0)
        func gather(_ count: Int) {
            for _ in 0..<count {
                store.queueWrite(syncingLater: true, gathering: true, { _ in }, done: { _ in done.add(1, ordering: .sequentiallyConsistent) })
            }
        }
        /// Queues `count` gathering writes and returns once the writer has taken them up and waits
        /// on the clock again (the store's writer is the clock's one waiter).
        func gatherAndSettle(_ count: Int) -> Bool {
            let woken = clock.wakeUps
            gather(count)
            return clock.waitUntilSettled(waiters: 1, wokenMoreThan: woken)
        }
        func committed(_ count: Int) -> Bool {
            eventually { done.load(ordering: .sequentiallyConsistent) >= count } && done.load(ordering: .sequentiallyConsistent) == count
        }
        // The writer waits for work before the test starts.
        #expect(clock.waitUntilSettled(waiters: 1))
        let start = store.commitCounts
        #expect(gatherAndSettle(1))
        #expect(done.load(ordering: .sequentiallyConsistent) == 0, "a gathering write is held for company")
        gather(GroupCommitWriter.gatheringBatch - 1)
        #expect(committed(GroupCommitWriter.gatheringBatch))
        #expect(store.commitCounts.deferred == start.deferred + 1, "eight in one commit")

        // Alone, it waits out the gathering wait (on the clock), no longer.
        #expect(clock.waitUntilSettled(waiters: 1))
        #expect(gatherAndSettle(1))
        #expect(done.load(ordering: .sequentiallyConsistent) == GroupCommitWriter.gatheringBatch)
        clock.advance(by: GroupCommitWriter.gatheringWait)
        #expect(committed(GroupCommitWriter.gatheringBatch + 1))
        #expect(store.commitCounts.deferred == start.deferred + 2)

        // A request's write does not wait behind them: it ends the wait and shares their commit,
        // a full one.
        #expect(clock.waitUntilSettled(waiters: 1))
        #expect(gatherAndSettle(2))
        #expect(done.load(ordering: .sequentiallyConsistent) == GroupCommitWriter.gatheringBatch + 1)
        let before = store.commitCounts
        let recipient = alice
        _ = try store.write { try $0.enqueue(.signIn(requestID: "r"), recipient: recipient, now: 100, giveUpAt: 10_000) }
        #expect(committed(GroupCommitWriter.gatheringBatch + 3))
        let after = store.commitCounts
        #expect(after.synced == before.synced + 1)
        #expect(after.deferred == before.deferred)
        store.close()
    }

    @Test("a queued write returns at once and reports after its commit; one that throws is rolled back alone; a closed store refuses")
    func queuedWrites() throws {
        let ids = try enqueue(3)
        let results = Mutex<[Int: String]>([:])
        let done = DispatchSemaphore(value: 0)
        // The first claims a message, the second claims one and then throws (rolled back), the
        // third claims one: all three in the writer's batches, none waiting for another.
        // The third waits for its fsync (a request's write); each hands back what its closure returned.
        for index in 0..<3 {
            store.queueWrite(syncingLater: index != 2, gathering: false, { writer in
                let claimed = try writer.claimDue(.mail, owner: "w\(index)", now: 100, leaseUntil: 160, limit: 1)
                if index == 1 { throw RefusedOnPurpose() }
                return claimed.map(\.message.id)
            }, done: { result in
                results.withLock {
                    switch result {
                    case .success(let claimed): $0[index] = "committed \(claimed.count)"
                    case .failure(let error): $0[index] = "\(error)"
                    }
                }
                done.signal()
            })
        }
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + 10) == .success) }
        let reported = results.withLock { $0 }
        #expect(reported[0] == "committed 1")
        #expect(reported[2] == "committed 1")
        #expect(reported[1] == "\(RefusedOnPurpose())")
        // Committed when reported: another connection sees exactly the two claims.
        let other = try SQLiteStore(path: database.path)
        let states = try ids.map { id in try other.read { try $0.outboxMessage(id: id) }?.state }
        #expect(states.filter { $0 == .claimed }.count == 2)
        #expect(states.filter { $0 == .queued }.count == 1)

        store.close()
        let refused = Mutex<String?>(nil)
        store.queueWrite(syncingLater: true, gathering: false, { _ in Issue.record("ran after close") }, done: { result in
            refused.withLock {
                if case .failure(let error) = result { $0 = "\(error)" } else { $0 = "committed" }
            }
            done.signal()
        })
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(refused.withLock { $0 }?.contains("closed") == true)
    }

    @Test("closing commits what is queued, flushes what waited for its fsync, then refuses writes")
    func closeFlushesAndRefuses() throws {
        let ids = try enqueue(2)
        let start = store.commitCounts
        _ = try store.writeSyncingLater { try $0.claimDue(.mail, owner: "w", now: 100, leaseUntil: 160, limit: 2) }
        store.close()
        let counts = store.commitCounts
        #expect(counts.flushes == start.flushes + 1)
        #expect(throws: StoreError.self) { try store.write { try $0.purgeFinished(.mail, before: 0, limit: 500) } }
        #expect(throws: StoreError.self) { try store.writeSyncingLater { try $0.purgeFinished(.mail, before: 0, limit: 500) } }
        // Reads still work, and another store sees every commit.
        #expect(try store.read { try $0.outboxMessage(id: ids[1]) }?.state == .claimed)
        let reopened = try SQLiteStore(path: database.path)
        #expect(try reopened.read { try $0.outboxCounts() }.byState[.claimed] == 2)
    }
}

/// The error a test's write throws to be rolled back.
private struct RefusedOnPurpose: Error {}

/// One outbox test's database and store, of either kind.
struct OutboxFixture {
    let database: TestDatabase
    let store: any Store
    let alice = EmailAddress.restored(localPart: "Alice", domain: "example.com")

    init(_ kind: StoreKind) throws {
        database = try kind.database()
        store = try database.open()
    }

    func mail(_ token: String) -> OutgoingMail {
        OutgoingMail(
            storedMessageID: "<\(token)@example.com>",
            envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["Alice@example.com", "cc@example.com"]),
            bytes: Array("Subject: \(token)\r\n\r\n.leading dot\r\n".utf8) + [0, 255])
    }

    func enqueue(_ count: Int, now: Int64 = 100, giveUpAt: Int64 = 10_000) throws -> [Int64] {
        let recipient = alice
        return try store.write { writer in
            try (0..<count).map { try writer.enqueue(.signIn(requestID: "r\($0)"), recipient: recipient, now: now, giveUpAt: giveUpAt) }
        }
    }

    /// The raw body column, to check it is erased.
    func storedBody(_ id: Int64) throws -> [UInt8]? {
        try database.withSQL { db in try db.first("SELECT body FROM outbox WHERE id = ?", [.integer(id)]) { $0.blob(0) } ?? nil }
    }
}

@Suite("Outbox, on each store")
struct OutboxStoreTests {
    // What the outbox does through the Store API alone is the store contract's (OutboxContract).

    @Test("the composed body is in its column byte for byte until the message is sent or dead, then erased", arguments: StoreKind.available)
    func bodyErasedWhenFinished(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        let store = fixture.store
        let ids = try fixture.enqueue(2)
        _ = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 2) }
        let composed = fixture.mail("tok1")
        #expect(try store.write { try $0.storeMail(id: ids[0], owner: "w1", mail: composed) })
        #expect(try store.write { try $0.storeMail(id: ids[1], owner: "w1", mail: fixture.mail("dead")) })
        #expect(try fixture.storedBody(ids[0]) == composed.bytes)
        #expect(try store.write { try $0.markSent(.mail, id: ids[0], owner: "w1", now: 131, reply: "250 2.0.0 queued") })
        #expect(try store.write { try $0.markDead(.mail, id: ids[1], owner: "w1", now: 131, reply: "550 5.1.1 unknown user") })
        #expect(try fixture.storedBody(ids[0]) == nil)
        #expect(try fixture.storedBody(ids[1]) == nil)
    }

    @Test("two processes' stores claiming at once never get the same message", arguments: StoreKind.available)
    func concurrentClaims(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        let store = fixture.store
        let ids = try fixture.enqueue(400)
        let other = try fixture.database.open()
        let stores: [any Store] = [store, other]
        let claimed = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let mine = stores[worker % 2]
            while true {
                let batch = (try? mine.write { try $0.claimDue(.mail, owner: "w\(worker)", now: 100, leaseUntil: 160, limit: 7) }) ?? []
                if batch.isEmpty { return }
                claimed.withLock { $0 += batch.map(\.message.id) }
            }
        }
        let all = claimed.withLock { $0 }
        #expect(all.count == ids.count)
        #expect(Set(all) == Set(ids))
    }

}
