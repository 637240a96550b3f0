import Foundation
import PosternCore
import PosternCrypto
@testable import PosternStore
import Testing
import PosternTestSupport

@Suite("Store behaviour, on each store")
struct StoreTests {
    func account(_ uid: String, _ email: String?) throws -> Account {
        Account(uid: uid, email: try email.map { try EmailAddress.parse($0) }, createdAt: 1_800_000_000, providers: [.emailLink])
    }

    @Test("data survives reopening the database", arguments: StoreKind.available)
    func reopen(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        let alice = try account("u1", "Alice@Example.com")
        try store.write { try $0.insertAccount(alice) }
        let reopened = try database.open()
        let found = try reopened.read { try $0.account(address: EmailAddress.parse("alice@example.com")) }
        #expect(found == alice)
        #expect(found?.email?.address == "Alice@example.com")
    }

    @Test("an address belongs to at most one account", arguments: StoreKind.available)
    func addressUniqueness(kind: StoreKind) throws {
        let store = try kind.database().open()
        let first = try account("u1", "a@example.com")
        let second = try account("u2", "A@EXAMPLE.com")
        try store.write { try $0.insertAccount(first) }
        let error = #expect(throws: StoreError.self) { try store.write { try $0.insertAccount(second) } }
        #expect(error?.isAddressTaken == true)
        #expect(try store.read { try $0.account(uid: "u2") } == nil, "the refused insert left no account row")
        // A closure may go on after addressTaken: the transaction is still usable and commits.
        let third = try account("u3", "c@example.com")
        try store.write { tx in
            #expect(throws: StoreError.addressTaken) { try tx.insertAccount(second) }
            try tx.insertAccount(third)
        }
        #expect(try store.read { try $0.account(uid: "u3") } == third)
    }

    @Test("a failure in the middle of a write leaves no half state, and other writers are unaffected", arguments: StoreKind.available)
    func atomicWrites(kind: StoreKind) async throws {
        let store = try kind.database().open()
        struct Boom: Error {}
        let doomed = try account("u1", "a@example.com")
        let fine = try account("u2", "b@example.com")
        let failing = Task.detached {
            try store.write { tx in
                try tx.insertAccount(doomed)
                _ = try tx.consume(nonce: [1, 2, 3], expiresAt: 2_000_000_000)
                throw Boom()
            }
        }
        let succeeding = Task.detached { try store.write { try $0.insertAccount(fine) } }
        await #expect(throws: Boom.self) { try await failing.value }
        try await succeeding.value
        #expect(try store.read { try $0.account(uid: "u1") } == nil)
        #expect(try store.read { try $0.isConsumed(nonce: [1, 2, 3]) } == false)
        #expect(try store.read { try $0.account(uid: "u2") } == fine)
    }

    @Test("50 threads consuming one code: exactly one wins", arguments: StoreKind.available)
    func singleUse(kind: StoreKind) throws {
        let store = try kind.database().open()
        let nonce = try SecureRandom.bytes(16)
        let wins = Counter()
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            do {
                if try store.write({ try $0.consume(nonce: nonce, expiresAt: 2_000_000_000) }) { wins.increment() }
            } catch {
                failures.increment()
            }
        }
        #expect(wins.value == 1)
        #expect(failures.value == 0, "every loser is told false, none fails")
        #expect(try store.read { try $0.isConsumed(nonce: nonce) })
        #expect(try store.write { try $0.pruneConsumedCodes(now: 2_000_000_001, limit: 500) } == 1)
    }

    @Test("40 threads reading a rate limit, deciding and writing: exactly the limit is let through", arguments: StoreKind.available)
    func readDecideWriteIsSerializable(kind: StoreKind) throws {
        // Each closure reads the bucket's events and adds one only if fewer than 5: with less than
        // serializable isolation across connections, several would read 4 and all add theirs.
        let store = try kind.database().open()
        let bucket = Array(SHA256.hash("contended").prefix(16))
        let allowed = Counter()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            if (try? store.write({ try $0.rateLimit(bucket: bucket, now: 1000, interval: 0, perHour: 5) })) == .some(nil) {
                allowed.increment()
            }
        }
        #expect(allowed.value == 5)
    }

    @Test("concurrent writers are all committed and durable after reopening", arguments: StoreKind.available)
    func concurrentWritersCommit(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            _ = try? store.write { try $0.consume(nonce: [UInt8(i & 0xFF), UInt8(i >> 8)], expiresAt: 2_000_000_000) }
        }
        let reopened = try database.open()
        let missing = try reopened.read { tx in
            try (0..<400).filter { try !tx.isConsumed(nonce: [UInt8($0 & 0xFF), UInt8($0 >> 8)]) }
        }
        #expect(missing.isEmpty)
    }

    @Test("accounts update, move addresses and delete", arguments: StoreKind.available)
    func accountLifecycle(kind: StoreKind) throws {
        let store = try kind.database().open()
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

    @Test("the key ring lives in the store, sealed under the 0600 master key file", arguments: StoreKind.available)
    func keyRingInStore(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        let box = try MasterKeyFile.loadOrCreate(at: database.keyFile)
        let mode = try FileManager.default.attributesOfItem(atPath: database.keyFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let clock = ManualClock()
        let keys = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 600)
        let ring = try keys.prepare()
        let minted = try ring.actionCodes.mint(.signIn, binding: StateBinding("s"), ttl: 600, now: clock.unixSeconds())
        let again = KeyVault(
            store: try database.open(), box: try MasterKeyFile.loadOrCreate(at: database.keyFile), clock: clock, maxCodeLifetime: 600)
        _ = try again.open().actionCodes.verify(minted.text, now: clock.unixSeconds())
        // The stored secrets are sealed: the key file's key is nowhere in the key rows.
        let secret = try String(contentsOfFile: database.keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let sealed = try database.withSQL { db in
            var all: [UInt8] = []
            try db.query("SELECT sealed_secret FROM keys") { all += $0.blob(0) ?? [] }
            return all
        }
        #expect(!sealed.isEmpty)
        #expect(Data(sealed).range(of: Data(secret.utf8)) == nil)
        chmod(database.keyFile, 0o644)
        #expect(throws: StoreError.self) { try MasterKeyFile.loadOrCreate(at: database.keyFile) }
    }

    @Test("a write that may sync later is committed and seen at once", arguments: StoreKind.available)
    func writeSyncingLaterIsCommitted(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        let recipient = EmailAddress.restored(localPart: "a", domain: "example.com")
        let id = try store.writeSyncingLater { try $0.enqueue(.signIn(requestID: "r"), recipient: recipient, now: 100, giveUpAt: 900) }
        #expect(try database.open().read { try $0.outboxMessage(id: id) }?.state == .queued)
    }

    @Test("closing refuses writes; reads still work and every commit is kept", arguments: StoreKind.available)
    func closeRefusesWrites(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        let recipient = EmailAddress.restored(localPart: "a", domain: "example.com")
        let id = try store.writeSyncingLater { try $0.enqueue(.signIn(requestID: "r"), recipient: recipient, now: 100, giveUpAt: 900) }
        store.close()
        #expect(throws: StoreError.self) { try store.write { try $0.purgeFinished(.mail, before: 0, limit: 500) } }
        #expect(throws: StoreError.self) { try store.writeSyncingLater { try $0.purgeFinished(.mail, before: 0, limit: 500) } }
        #expect(try store.read { try $0.outboxMessage(id: id) }?.state == .queued)
        #expect(try database.open().read { try $0.outboxCounts() }.byState[.queued] == 1)
    }

    @Test("a database migrated by a newer Postern is refused, and left as it was", arguments: StoreKind.available)
    func newerSchemaRefused(kind: StoreKind) throws {
        let database = try kind.database()
        _ = try database.open()
        try database.withSQL { db in
            switch kind {
            case .sqlite: try db.execute("PRAGMA user_version = 999")
            case .postgres: try db.execute("INSERT INTO postern_migrations (version, applied_at) VALUES (999, 0)")
            }
        }
        let error = #expect(throws: StoreError.self) { _ = try database.open() }
        #expect(error?.isNewerSchema == true)
        #expect(error?.description.contains("999") == true, "\(String(describing: error))")
        #expect(try database.withSQL { try $0.first("SELECT count(*) FROM accounts") { $0.integer(0) } } == 0)
    }
}

@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test("migrations run once; the file is private")
    func migrationsAndMode() throws {
        let database = try TemporaryDatabase()
        let store = try SQLiteStore(path: database.path)
        #expect(try store.schemaVersion() == Schema.migrations.count)
        let mode = try FileManager.default.attributesOfItem(atPath: database.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try SQLiteStore(path: database.path).schemaVersion() == Schema.migrations.count)
    }

    @Test("the master key file sits beside the database, and its key is not in the file")
    func keyFileBesideDatabase() throws {
        let database = try TemporaryDatabase()
        let store = try SQLiteStore(path: database.path)
        let keyPath = MasterKeyFile.path(forDatabase: database.path)
        #expect(keyPath.hasSuffix("/postern.key"))
        _ = try KeyVault(store: store, box: MasterKeyFile.loadOrCreate(at: keyPath), clock: ManualClock(), maxCodeLifetime: 600).prepare()
        let secret = try String(contentsOfFile: keyPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        store.close()
        let dbBytes = try Data(contentsOf: URL(fileURLWithPath: database.path))
        #expect(dbBytes.range(of: Data(secret.utf8)) == nil)
    }
}
