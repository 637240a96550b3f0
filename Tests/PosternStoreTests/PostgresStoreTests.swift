import Foundation
import PosternCore
@testable import PosternPostgres
import PosternSQL
import PosternTestSupport
import Synchronization
import Testing

/// What only the PostgreSQL store has: migrations raced by several daemons, lost connections,
/// isolation chosen per transaction, and connection strings that hold passwords.
@Suite("PostgreSQL store", .enabled(if: StoreKind.available.contains(.postgres)))
struct PostgresStoreTests {
    @Test("3 migrators starting at once on a fresh database: the schema is migrated exactly once")
    func concurrentMigrationsRunOnce() throws {
        let location = try TestPostgres.newSchema()
        let applied = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            do {
                let connection = try PostgresConnection(#require(PostgresConnectionString(location)))
                let count = try PostgresSchema.migrate(connection)
                applied.withLock { $0.append(count) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(applied.withLock { $0.sorted() } == [0, 0, PostgresSchema.migrations.count])
        let database = try TestDatabase(postgresSchema: location)
        #expect(try database.withSQL { try $0.first("SELECT count(*) FROM postern_migrations") { $0.integer(0) } } == Int64(PostgresSchema.migrations.count))
        #expect(try PostgresStore(connectionString: location).schemaVersion() == PostgresSchema.migrations.count)
    }

    @Test("the migration is not idempotent: 3 at once without the lock, 2 fail (so the test above passes by the lock)")
    func racingWithoutTheLockFails() throws {
        // The migration run by hand, as a daemon without the lock would: of three at once, those
        // that find the tables made by another fail (or all three succeed only by running in turn).
        let location = try TestPostgres.newSchema()
        let failures = Counter()
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            DispatchQueue.global().async(group: group) {
                do {
                    let connection = try PostgresConnection(#require(PostgresConnectionString(location)))
                    start.wait()
                    try connection.executeSimple("BEGIN; \(PostgresSchema.migrations[0]); COMMIT")
                } catch {
                    failures.increment()
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.2)
        for _ in 0..<3 { start.signal() }
        group.wait()
        #expect(failures.value == 2)
    }

    @Test("a connection the server ends is replaced, and its statements are prepared again")
    func reconnectsAfterTheServerEndsTheConnection() throws {
        let database = try StoreKind.postgres.database()
        let store = try #require(try database.open() as? PostgresStore)
        try store.write { try $0.insertAccount(Account(uid: "u1", createdAt: 1)) }
        #expect(try store.read { try $0.account(uid: "u1") } != nil)
        // End every backend of this store's pool from another connection.
        let pids = store.idleBackendPIDs
        #expect(!pids.isEmpty)
        let killed = try database.withSQL { db in
            try pids.filter { pid in try db.first("SELECT pg_terminate_backend(?)", [.integer(Int64(pid))]) { $0.integer(0) } == 1 }.count
        }
        #expect(killed == pids.count)
        Thread.sleep(forTimeInterval: 0.1)
        // The next transactions run on new connections, with every statement prepared anew.
        #expect(try store.read { try $0.account(uid: "u1") }?.uid == "u1")
        try store.write { try $0.insertAccount(Account(uid: "u2", createdAt: 1)) }
        #expect(try store.read { try $0.account(uid: "u2") } != nil)
    }

    @Test("a server that is gone is a clear unavailable, naming the server and never the password")
    func unreachableServerKeepsThePasswordOut() throws {
        let password = "s3cret-Passw0rd-xyz"
        for text in [
            "postgres://postern:\(password)@127.0.0.1:1/postern?connect_timeout=2",
            "host=127.0.0.1 port=1 user=postern password=\(password) dbname=postern connect_timeout=2",
            "host=/nonexistent-\(password) port=5432 password=\(password) dbname=postern",
        ] {
            let error = #expect(throws: StoreError.self) { _ = try PostgresStore(connectionString: text) }
            let message = String(describing: error)
            #expect(message.contains("unavailable"), "\(message)")
            #expect(message.contains("PostgreSQL"), "\(message)")
            #expect(!message.contains(password), "\(message)")
            #expect(PostgresConnectionString(text)?.description.contains(password) == false)
        }
        // A path is not a connection string.
        #expect(!PostgresConnectionString.isPostgres("./postern.db"))
        #expect(!PostgresConnectionString.isPostgres("/var/lib/postern/a=b.db"))
        #expect(PostgresConnectionString.isPostgres("postgresql://db.example.com/postern"))
        #expect(PostgresConnectionString.isPostgres("host=db.example.com dbname=postern"))
    }

    @Test("claims run READ COMMITTED with SKIP LOCKED: 3 stores × 4 workers claim 600 messages, each once, none refused")
    func claimsSkipLockedRows() throws {
        let database = try StoreKind.postgres.database()
        let stores = try (0..<3).map { _ in try database.open() }
        let recipient = EmailAddress.restored(localPart: "a", domain: "example.com")
        let ids = try stores[0].write { tx in
            try (0..<600).map { try tx.enqueue(.signIn(requestID: "r\($0)"), recipient: recipient, now: 100, giveUpAt: 900) }
        }
        let claimed = Mutex<[Int64]>([])
        let errors = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { worker in
            let store = stores[worker % 3]
            while true {
                do {
                    let batch = try store.write { try $0.claimDue(.mail, owner: "w\(worker)", now: 100, leaseUntil: 160, limit: 5) }
                    if batch.isEmpty { return }
                    claimed.withLock { $0 += batch.map(\.message.id) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(errors.withLock { $0 } == [])
        let all = claimed.withLock { $0 }
        #expect(all.count == ids.count)
        #expect(Set(all) == Set(ids))
        // Not one claim was refused and run again: SERIALIZABLE claims would collide (40001).
        #expect(stores.compactMap { ($0 as? PostgresStore)?.retries }.reduce(0, +) == 0)
    }

    @Test("a closure that starts row-locked and then reads runs again SERIALIZABLE, and commits once")
    func rowLockedStartEscalates() throws {
        let store = try StoreKind.postgres.database().open()
        let recipient = EmailAddress.restored(localPart: "a", domain: "example.com")
        _ = try store.write { try $0.enqueue(.signIn(requestID: "r"), recipient: recipient, now: 100, giveUpAt: 900) }
        let runs = Counter()
        let claims = try store.write { tx -> Int in
            runs.increment()
            let claims = try tx.claimDue(.mail, owner: "w", now: 100, leaseUntil: 160, limit: 5)
            if try tx.account(uid: "u1") == nil { try tx.insertAccount(Account(uid: "u1", createdAt: 1)) }
            return claims.count
        }
        #expect(claims == 1)
        #expect(runs.value == 2)
        #expect(try store.read { try $0.outboxCounts() }.byState[.claimed] == 1)
        #expect(try store.read { try $0.account(uid: "u1") } != nil)
    }

    @Test("a duplicate key other than an address is StoreError.duplicate naming the constraint, not the value")
    func duplicateKeyIsTyped() throws {
        let store = try StoreKind.postgres.database().open()
        try store.write { try $0.insertAccount(Account(uid: "secret-uid-value", createdAt: 1)) }
        let error = #expect(throws: StoreError.self) {
            try store.write { try $0.insertAccount(Account(uid: "secret-uid-value", createdAt: 2)) }
        }
        #expect(error == .duplicate("accounts_pkey"))
        #expect(error?.description.contains("secret-uid-value") == false)
    }

    @Test("a serialization failure is retried: two writers that read, meet, then write both get their answer")
    func serializationFailuresAreRetried() throws {
        // Both closures read the bucket, wait until the other has read it too, then add an event:
        // a read-write cycle SERIALIZABLE refuses (40001) for one of them, which runs again and
        // then sees the other's event. Only the first arrivals wait, so the rerun goes straight on.
        let store = try #require(try StoreKind.postgres.database().open() as? PostgresStore)
        let bucket: [UInt8] = Array(repeating: 7, count: 16)
        let meeting = Barrier(parties: 2)
        let waits = Mutex<[Int64?]>([])
        let errors = Mutex<[String]>([])
        onThreads(2) { _ in
            do {
                let wait = try store.write { tx -> Int64? in
                    _ = try tx.guessRecord(bucket: bucket)
                    _ = try tx.account(uid: "nobody")
                    meeting.arriveAndWait()
                    return try tx.rateLimit(bucket: bucket, now: 1000, interval: 0, perHour: 1)
                }
                waits.withLock { $0.append(wait) }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 } == [])
        #expect(waits.withLock { $0 }.filter { $0 == nil }.count == 1, "exactly one event fits the hour: \(waits.withLock { $0 })")
        #expect(store.retries >= 1, "the writers collided, and one was run again")
    }

    @Test("a restarted server: every idle connection is dead, yet the next transaction succeeds")
    func serverRestartDrainsThePool() throws {
        let database = try StoreKind.postgres.database()
        let store = try #require(try database.open() as? PostgresStore)
        // Four reads held open at once: four connections, then idle in the pool.
        let meeting = Barrier(parties: 4)
        onThreads(4) { _ in
            _ = try? store.read { tx in
                _ = try tx.account(uid: "x")
                meeting.arriveAndWait()
            }
        }
        let pids = store.idleBackendPIDs
        #expect(pids.count == 4)
        try database.withSQL { db in
            for pid in pids { _ = try db.first("SELECT pg_terminate_backend(?)", [.integer(Int64(pid))]) { $0.integer(0) } }
        }
        Thread.sleep(forTimeInterval: 0.1)
        try store.write { try $0.insertAccount(Account(uid: "after", createdAt: 1)) }
        #expect(try store.read { try $0.account(uid: "after") } != nil)
    }

    @Test("placeholders are numbered outside quotes only")
    func placeholders() {
        #expect(PostgresConnection.numberedPlaceholders("SELECT ? , '?', \"a?\" WHERE x = ?") == "SELECT $1 , '?', \"a?\" WHERE x = $2")
    }
}

/// Lets the first `parties` arrivals wait for one another (at most 5 s); later arrivals pass.
final class Barrier: Sendable {
    private let parties: Int
    private let arrived = Mutex(0)

    init(parties: Int) { self.parties = parties }

    func arriveAndWait() {
        let number = arrived.withLock { count -> Int in
            count += 1
            return count
        }
        guard number <= parties else { return }
        let deadline = Date().addingTimeInterval(5)
        while arrived.withLock({ $0 }) < parties && Date() < deadline { usleep(1000) }
    }
}
