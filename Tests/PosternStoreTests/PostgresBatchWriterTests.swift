import Foundation
import PosternCore
@testable import PosternPostgres
import PosternSQL
import PosternTestSupport
import Synchronization
import Testing

/// The batch writer of the PostgreSQL store: queued writes share one transaction, each closure in
/// a savepoint of its own, and a batch the server fails runs each closure alone.
@Suite("PostgreSQL batch writer", .enabled(if: StoreKind.available.contains(.postgres)))
struct PostgresBatchWriterTests {
    struct RefusedOnPurpose: Error, CustomStringConvertible {
        var description: String { "refused on purpose" }
    }

    let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")

    /// What each queued write was told, by its index.
    final class Answers: Sendable {
        private let byIndex = Mutex<[Int: String]>([:])
        func set(_ index: Int, _ text: String) { byIndex.withLock { $0[index] = text } }
        var all: [Int: String] { byIndex.withLock { $0 } }
    }

    /// A store with one writer thread (two connections), and a way to hold that thread in a
    /// closure until every write of a test is queued behind it, so they make one batch.
    func heldStore() throws -> (PostgresStore, hold: () -> Void, release: () -> Void) {
        let store = try PostgresStore(connectionString: try TestPostgres.newSchema(), connections: 2)
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let hold = {
            store.queueWrite(syncingLater: false, gathering: false, { _ in
                started.signal()
                gate.wait()
            }, done: { _ in })
            started.wait()
        }
        return (store, hold, { gate.signal() })
    }

    /// Holds the writer, queues `count` writes with `queueAll` (each tells its answer to the
    /// ``Answers`` and signals the semaphore), lets them go as one batch, and returns their answers.
    func inOneBatch(
        _ hold: () -> Void, _ release: () -> Void, count: Int, _ queueAll: (Answers, DispatchSemaphore) -> Void
    ) -> [Int: String] {
        let answers = Answers()
        let done = DispatchSemaphore(value: 0)
        hold()
        queueAll(answers, done)
        release()
        for _ in 0..<count { #expect(done.wait(timeout: .now() + 10) == .success) }
        return answers.all
    }

    /// Queues `body` and returns where its answer will be, as text.
    func queued<T: Sendable>(
        _ store: PostgresStore, _ answers: Answers, _ index: Int, _ done: DispatchSemaphore,
        _ body: @escaping @Sendable (any StoreWriter) throws -> T
    ) {
        store.queueWrite(syncingLater: false, gathering: false, body) { result in
            switch result {
            case .success(let value): answers.set(index, "ok \(value)")
            case .failure(let error): answers.set(index, "\(error)")
            }
            done.signal()
        }
    }

    @Test("one batch, one commit: a closure that throws is undone alone, whether its statements were sent or only queued")
    func throwingClosuresUndoneAlone() throws {
        let (store, hold, release) = try heldStore()
        let before = store.batches
        let recipient = alice
        let answers = inOneBatch(hold, release, count: 5) { answers, done in
            queued(store, answers, 0, done) { tx in try tx.insertAccount(Account(uid: "kept-0", createdAt: 1)); return "kept-0" }
            // Sent (an INSERT waited for), then thrown: rolled back to its savepoint.
            queued(store, answers, 1, done) { tx -> String in
                try tx.insertAccount(Account(uid: "undone-1", createdAt: 1))
                throw RefusedOnPurpose()
            }
            // Only queued (a deferred INSERT not sent yet), then thrown: dropped before it is sent.
            queued(store, answers, 2, done) { tx -> String in
                try tx.queue(MailIntent.signIn(requestID: "undone-2"), recipient: recipient, now: 100, giveUpAt: 900)
                throw RefusedOnPurpose()
            }
            // Queued, then sent with a read, then thrown.
            queued(store, answers, 3, done) { tx -> String in
                try tx.queue(MailIntent.signIn(requestID: "undone-3"), recipient: recipient, now: 100, giveUpAt: 900)
                _ = try tx.account(uid: "kept-0")
                throw RefusedOnPurpose()
            }
            // Deferred and kept: sent with the COMMIT; it sees the closures kept before it.
            queued(store, answers, 4, done) { tx -> Bool in
                try tx.queue(MailIntent.signIn(requestID: "kept-4"), recipient: recipient, now: 100, giveUpAt: 900)
                return try tx.account(uid: "kept-0") != nil && tx.account(uid: "undone-1") == nil
            }
        }
        #expect(answers == [
            0: "ok kept-0", 1: "refused on purpose", 2: "refused on purpose", 3: "refused on purpose", 4: "ok true",
        ])
        let after = store.batches
        #expect(after.committed == before.committed + 1, "the five in one transaction")
        #expect(after.writes == before.writes + 5)
        #expect(after.fellBack == before.fellBack)
        #expect(try store.read { try $0.account(uid: "kept-0") } != nil)
        #expect(try store.read { try $0.account(uid: "undone-1") } == nil)
        #expect(try store.read { try $0.outboxCounts() }.byState[.queued] == 1, "only kept-4's mail")
        store.close()
    }

    @Test("a statement the server refuses fails the batch: each closure runs alone, once, and the refused one gets its own error")
    func serverFailureRunsEachAlone() throws {
        let (store, hold, release) = try heldStore()
        try store.write { try $0.insertAccount(Account(uid: "taken", createdAt: 1)) }
        let before = store.batches
        let runs = Mutex<[Int: Int]>([:])
        let reported = inOneBatch(hold, release, count: 6) { answers, done in
            for index in 0..<6 {
                queued(store, answers, index, done) { tx -> String in
                    runs.withLock { $0[index, default: 0] += 1 }
                    let uid = index == 3 ? "taken" : "new-\(index)"
                    try tx.insertAccount(Account(uid: uid, createdAt: 1))
                    return uid
                }
            }
        }
        for index in [0, 1, 2, 4, 5] { #expect(reported[index] == "ok new-\(index)") }
        #expect(reported[3] == "\(StoreError.duplicate("accounts_pkey"))")
        #expect(store.batches.fellBack == before.fellBack + 1)
        // Those before the refused one ran in the batch and again alone; none is committed twice.
        #expect(runs.withLock { $0 } == [0: 2, 1: 2, 2: 2, 3: 2, 4: 1, 5: 1])
        for index in [0, 1, 2, 4, 5] { #expect(try store.read { try $0.account(uid: "new-\(index)") } != nil) }
        store.close()
    }

    @Test("the outbox's outcome records and the requests' writes taken together commit as two batches, each closure run once (none started READ COMMITTED and ran again)")
    func recordsApartFromRequests() throws {
        let (store, hold, release) = try heldStore()
        let recipient = alice
        _ = try store.write { tx in
            try (0..<3).map { try tx.enqueue(.signIn(requestID: "r\($0)"), recipient: recipient, now: 100, giveUpAt: 900) }
        }
        let before = store.batches
        let runs = Mutex<[Int: Int]>([:])
        let answers = inOneBatch(hold, release, count: 6) { answers, done in
            for index in 0..<6 {
                // Alternating: a row-locked claim (as a record is), then a request's write.
                let record = index % 2 == 0
                store.queueWrite(syncingLater: record, gathering: record, { tx -> String in
                    runs.withLock { $0[index, default: 0] += 1 }
                    if record { return "claimed \(try tx.claimDue(.mail, owner: "w\(index)", now: 100, leaseUntil: 160, limit: 1).count)" }
                    try tx.insertAccount(Account(uid: "u\(index)", createdAt: 1))
                    return "inserted"
                }, done: { result in
                    answers.set(index, (try? result.get()) ?? "\(result)")
                    done.signal()
                })
            }
        }
        #expect(answers == [0: "claimed 1", 1: "inserted", 2: "claimed 1", 3: "inserted", 4: "claimed 1", 5: "inserted"])
        #expect(runs.withLock { $0 } == [0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1])
        let after = store.batches
        #expect(after.committed == before.committed + 2)
        #expect(after.writes == before.writes + 6)
        #expect(after.fellBack == before.fellBack)
        store.close()
    }

    @Test("two daemons' writers, 400 queued writes from 16 threads against one limit of 150 an hour: exactly 150 pass, none fails")
    func limitExactAcrossBatches() throws {
        let location = try TestPostgres.newSchema()
        let stores = try (0..<2).map { _ in try PostgresStore(connectionString: location) }
        let bucket = Array(repeating: UInt8(3), count: 16)
        let passed = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
        onThreads(16) { thread in
            let store = stores[thread % 2]
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<25 {
                store.queueWrite(syncingLater: false, gathering: false, { tx in
                    try tx.rateLimit(bucket: bucket, now: 1_000, interval: 0, perHour: 150)
                }, done: { result in
                    switch result {
                    case .success(nil): passed.add(1, ordering: .relaxed)
                    case .success: refused.add(1, ordering: .relaxed)
                    case .failure(let error): errors.withLock { $0.append("\(error)") }
                    }
                    done.signal()
                })
            }
            for _ in 0..<25 { _ = done.wait(timeout: .now() + 60) }
        }
        #expect(errors.withLock { $0 } == [])
        #expect(passed.load(ordering: .relaxed) == 150)
        #expect(refused.load(ordering: .relaxed) == 250)
        let batched = stores.map(\.batches.writes).reduce(0, +)
        #expect(batched > 0, "some writes shared a transaction")
        for store in stores { store.close() }
    }

    @Test("closing commits what is queued before it returns, then refuses queued writes")
    func closeCommitsThenRefuses() throws {
        let (store, hold, release) = try heldStore()
        let answers = Answers()
        let done = DispatchSemaphore(value: 0)
        hold()
        for index in 0..<3 {
            queued(store, answers, index, done) { tx -> Int in
                try tx.insertAccount(Account(uid: "before-close-\(index)", createdAt: 1))
                return index
            }
        }
        let closing = DispatchSemaphore(value: 0)
        Thread.start(named: "closing") {
            store.close()
            closing.signal()
        }
        release()
        #expect(closing.wait(timeout: .now() + 10) == .success)
        // Reported by the time close returned.
        #expect(answers.all == [0: "ok 0", 1: "ok 1", 2: "ok 2"])
        queued(store, answers, 3, done) { _ in "ran after close" }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(answers.all[3]?.contains("closed") == true)
        for index in 0..<3 { #expect(try store.read { try $0.account(uid: "before-close-\(index)") } != nil) }
    }
}
