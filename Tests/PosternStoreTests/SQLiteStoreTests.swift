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

    @Test("a database from before RS256 gets its RSA key at its next start, beside the keys it had", arguments: StoreKind.available)
    func rsaKeyAddedToExistingDatabase(kind: StoreKind) throws {
        let database = try kind.database()
        let box = try MasterKeyFile.loadOrCreate(at: database.keyFile)
        let clock = ManualClock()
        let vault = { (store: any Store) in
            KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 600, rsaKeys: .madeOncePerProcess)
        }
        let before = try vault(try database.open()).prepare()
        // What a database made before the purpose existed holds: every key but the RSA one.
        try database.withSQL { try $0.execute("DELETE FROM keys WHERE purpose = 'id-token-rsa'") }
        let old = try database.open()
        #expect(throws: StoreError.self, "no active RSA key yet") { try vault(old).open() }
        let started = try vault(old).prepare()
        #expect(started.idTokenSigner.keyID == before.idTokenSigner.keyID)
        #expect(started.actionCodes.activeKeyID == before.actionCodes.activeKeyID)
        #expect(started.idTokenRSASigner.keyID != before.idTokenRSASigner.keyID)
        #expect(started.jwks["keys"]?.map { $0["kid"] } == [started.idTokenSigner.keyID, started.idTokenRSASigner.keyID])
        let reopened = try vault(try database.open()).open()
        #expect(reopened.idTokenRSASigner.publicJWK == started.idTokenRSASigner.publicJWK)
        let rows = try database.withSQL { try $0.first("SELECT count(*) FROM keys WHERE purpose = 'id-token-rsa'") { $0.integer(0) } }
        #expect(rows == 1)
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

    @Test("a client registered before migration 23 signs with ES256, as it did; a row of another algorithm is corrupt")
    func clientsBeforeSigningAlgorithm() throws {
        let (old, db) = try SQLiteOutboxTests.database(atSchema: 22)
        try db.execute("""
            INSERT INTO oidc_clients (client_id, name, secret_hash, redirect_uris, post_logout_redirect_uris, scopes, first_party, allow_no_pkce, created_at)
            VALUES ('grafana', 'Grafana', NULL, '["https://grafana.example.com/cb"]', '[]', 'openid email', 0, 0, 500)
            """)
        let migrated = try SQLiteStore(path: old.path)
        #expect(try migrated.schemaVersion() == Schema.migrations.count)
        #expect(try migrated.read { try $0.oidcClient(id: "grafana") }?.idTokenSignedResponseAlg == .es256)
        try db.execute("UPDATE oidc_clients SET id_token_signed_response_alg = 'HS256'")
        #expect(throws: StoreError.self) { try migrated.read { try $0.oidcClient(id: "grafana") } }
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
