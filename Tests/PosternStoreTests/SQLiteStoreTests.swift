import Foundation
import PosternCore
import PosternCrypto
@testable import PosternStore
import Testing

/// A fresh database file in its own temporary directory.
struct TemporaryDatabase {
    let directory: URL
    var path: String { directory.appendingPathComponent("postern.db").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
}

@Suite("SQLite store")
struct SQLiteStoreTests {
    let database: TemporaryDatabase
    let store: SQLiteStore

    init() throws {
        database = try TemporaryDatabase()
        store = try SQLiteStore(path: database.path)
    }

    func account(_ uid: String, _ email: String?) throws -> Account {
        Account(uid: uid, email: try email.map { try EmailAddress.parse($0) }, createdAt: 1_800_000_000, providers: [.emailLink])
    }

    @Test("migrations run once; the file is private; data survives reopening")
    func migrationsAndReopen() throws {
        #expect(try store.schemaVersion() == Schema.migrations.count)
        let mode = try FileManager.default.attributesOfItem(atPath: database.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let alice = try account("u1", "Alice@Example.com")
        try store.write { try $0.insertAccount(alice) }
        let reopened = try SQLiteStore(path: database.path)
        #expect(try reopened.schemaVersion() == Schema.migrations.count)
        let found = try reopened.read { try $0.account(address: EmailAddress.parse("alice@example.com")) }
        #expect(found == alice)
        #expect(found?.email?.address == "Alice@example.com")
    }

    @Test("an address belongs to at most one account")
    func addressUniqueness() throws {
        let first = try account("u1", "a@example.com")
        let second = try account("u2", "A@EXAMPLE.com")
        try store.write { try $0.insertAccount(first) }
        let error = #expect(throws: StoreError.self) { try store.write { try $0.insertAccount(second) } }
        #expect(error?.isAddressTaken == true)
        #expect(try store.read { try $0.account(uid: "u2") } == nil, "the refused insert left no account row")
    }

    @Test("a failure in the middle of a write leaves no half state, and other writers are unaffected")
    func atomicWrites() async throws {
        struct Boom: Error {}
        let doomed = try account("u1", "a@example.com")
        let fine = try account("u2", "b@example.com")
        let failing = Task.detached { [store] in
            try store.write { tx in
                try tx.insertAccount(doomed)
                _ = try tx.consume(nonce: [1, 2, 3], expiresAt: 2_000_000_000)
                throw Boom()
            }
        }
        let succeeding = Task.detached { [store] in try store.write { try $0.insertAccount(fine) } }
        await #expect(throws: Boom.self) { try await failing.value }
        try await succeeding.value
        #expect(try store.read { try $0.account(uid: "u1") } == nil)
        #expect(try store.read { try $0.isConsumed(nonce: [1, 2, 3]) } == false)
        #expect(try store.read { try $0.account(uid: "u2") } == fine)
    }

    @Test("50 threads consuming one code: exactly one wins")
    func singleUse() throws {
        let nonce = try SecureRandom.bytes(16)
        let wins = Counter()
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            if (try? store.write({ try $0.consume(nonce: nonce, expiresAt: 2_000_000_000) })) == true { wins.increment() }
        }
        #expect(wins.value == 1)
        #expect(try store.read { try $0.isConsumed(nonce: nonce) })
        #expect(try store.write { try $0.pruneConsumedCodes(now: 2_000_000_001) } == 1)
    }

    @Test("concurrent writers are all committed (group commit) and durable after reopening")
    func groupCommit() throws {
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            _ = try? store.write { try $0.consume(nonce: [UInt8(i & 0xFF), UInt8(i >> 8)], expiresAt: 2_000_000_000) }
        }
        let reopened = try SQLiteStore(path: database.path)
        let missing = try reopened.read { tx in
            try (0..<400).filter { try !tx.isConsumed(nonce: [UInt8($0 & 0xFF), UInt8($0 >> 8)]) }
        }
        #expect(missing.isEmpty)
    }

    @Test("accounts update, move addresses and delete")
    func accountLifecycle() throws {
        var alice = try account("u1", "a@example.com")
        try store.write { [alice] in try $0.insertAccount(alice) }
        alice.email = try EmailAddress.parse("new@example.com")
        alice.passwordHash = "$scrypt$x"
        alice.providers = [.password, .emailLink]
        try store.write { [alice] in try $0.updateAccount(alice) }
        #expect(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) } == nil)
        #expect(try store.read { try $0.account(address: EmailAddress.parse("new@example.com")) } == alice)
        #expect(
            try store.read { try $0.passwordCredential(address: EmailAddress.parse("NEW@example.com")) }
                == PasswordCredential(uid: "u1", passwordHash: "$scrypt$x"))
        #expect(try store.read { try $0.passwordCredential(address: EmailAddress.parse("a@example.com")) } == nil)
        let anonymous = try account("u3", nil)
        try store.write { try $0.insertAccount(anonymous) }
        #expect(try store.read { try $0.account(uid: "u3") }?.isAnonymous == true)
        try store.write { try $0.deleteAccount(uid: "u1") }
        #expect(try store.read { try $0.account(uid: "u1") } == nil)
        let gone = alice
        #expect(throws: StoreError.self) { try store.write { try $0.updateAccount(gone) } }
    }

    @Test("the key ring lives in the store, sealed under the 0600 master key file")
    func keyRingOnDisk() throws {
        let keyPath = MasterKeyFile.path(forDatabase: database.path)
        #expect(keyPath.hasSuffix("/postern.key"))
        let box = try MasterKeyFile.loadOrCreate(at: keyPath)
        let mode = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let clock = ManualClock()
        let keys = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 600)
        let ring = try keys.prepare()
        let minted = try ring.actionCodes.mint(.signIn, binding: StateBinding("s"), ttl: 600, now: clock.unixSeconds())
        let again = KeyVault(
            store: try SQLiteStore(path: database.path), box: try MasterKeyFile.loadOrCreate(at: keyPath), clock: clock,
            maxCodeLifetime: 600)
        _ = try again.open().actionCodes.verify(minted.text, now: clock.unixSeconds())
        let secret = try String(contentsOfFile: keyPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let dbBytes = try Data(contentsOf: URL(fileURLWithPath: database.path))
        #expect(dbBytes.range(of: Data(secret.utf8)) == nil)
        chmod(keyPath, 0o644)
        #expect(throws: StoreError.self) { try MasterKeyFile.loadOrCreate(at: keyPath) }
    }
}

/// A thread-safe counter for tests.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

import Synchronization
import PosternTestSupport
