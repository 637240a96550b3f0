import Foundation
import PosternCore
import PosternCrypto
@testable import PosternStore
import Testing
import PosternTestSupport

@Suite("Account import and export, on each store")
struct AccountImportStoreTests {
    @Test("accounts page in uid order for export", arguments: StoreKind.available)
    func accountPages(kind: StoreKind) throws {
        let store = try kind.database().open()
        let uids = (0..<25).map { String(format: "u%03d", 24 - $0) }
        try store.write { tx in
            for uid in uids {
                try tx.insertAccount(Account(uid: uid, email: try EmailAddress.parse("\(uid)@example.com"), createdAt: 1))
            }
            try tx.insertAccount(Account(uid: "anonymous", createdAt: 2))
        }
        var seen: [String] = []
        var after: String?
        while true {
            let cursor = after
            let page = try store.read { try $0.accounts(after: cursor, limit: 10) }
            guard let last = page.last else { break }
            #expect(page.count <= 10)
            seen += page.map(\.uid)
            after = last.uid
        }
        #expect(seen == (uids + ["anonymous"]).sorted())
        #expect(try store.read { try $0.accounts(after: nil, limit: 100) }.first { $0.uid == "u007" }?.email?.address == "u007@example.com")
    }

    @Test("a password hash of a scheme is found by its marker, taken as it is (no wildcards)", arguments: StoreKind.available)
    func passwordHashSample(kind: StoreKind) throws {
        let store = try kind.database().open()
        try store.write { tx in
            var postern = Account(uid: "p", email: try EmailAddress.parse("p@example.com"), createdAt: 1)
            postern.passwordHash = "$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA"
            var imported = Account(uid: "b", email: try EmailAddress.parse("b@example.com"), createdAt: 1)
            imported.passwordHash = "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
            try tx.insertAccount(postern)
            try tx.insertAccount(imported)
            try tx.insertAccount(Account(uid: "n", email: try EmailAddress.parse("n@example.com"), createdAt: 1))
        }
        #expect(try store.read { try $0.passwordHashSample(prefix: "$2b$") }?.hasPrefix("$2b$10$") == true)
        #expect(try store.read { try $0.passwordHashSample(prefix: "$2a$") } == nil)
        #expect(try store.read { try $0.passwordHashSample(prefix: "$firebase-scrypt$") } == nil)
        #expect(try store.read { try $0.passwordHashSample(prefix: "%") } == nil, "a LIKE wildcard matches nothing")
    }

    @Test("a Firebase hash key is stored once, sealed, and opens into the ring's verifier", arguments: StoreKind.available)
    func firebaseKeySealed(kind: StoreKind) throws {
        let database = try kind.database()
        let store = try database.open()
        let vault = KeyVault(store: store, box: try MasterKeyFile.loadOrCreate(at: database.keyFile), clock: ManualClock(), maxCodeLifetime: 600)
        _ = try vault.prepare()
        let signerKey = try SecureRandom.bytes(64)
        #expect(try vault.firebaseHashKey(signerKey, dryRun: true) == 0)
        let id = try vault.firebaseHashKey(signerKey)
        #expect(try vault.firebaseHashKey(signerKey) == id, "the same key again is the same row")
        #expect(try vault.firebaseHashKey(try SecureRandom.bytes(64)) != id)
        #expect(try vault.list().filter { $0.purpose == .firebaseHashKey }.count == 2)
        let sealed = try database.withSQL { db in
            var all: [UInt8] = []
            try db.query("SELECT sealed_secret FROM keys WHERE purpose = 'firebase-hash-key'") { all += $0.blob(0) ?? [] }
            return all
        }
        #expect(Data(sealed).range(of: Data(signerKey)) == nil, "the key is not in the database in the clear")
        // `prepare` and `rotate` leave imported keys alone.
        _ = try vault.prepare()
        #expect(throws: StoreError.self) { try vault.rotate(.firebaseHashKey) }
        let parameters = try FirebaseHashParameters(signerKey: signerKey, saltSeparator: [7], rounds: 2, memCost: 4)
        let salt = try SecureRandom.bytes(12)
        let hash = try FirebaseScrypt.hash(password: "old password", salt: salt, parameters: parameters)
        let stored = FirebaseStoredHash(keyID: id, rounds: 2, memCost: 4, saltSeparator: [7], salt: salt, hash: hash).encoded
        #expect(try vault.open().passwords.verify("old password", against: stored))
        #expect(try !vault.open().passwords.verify("new password", against: stored))
    }

    @Test("the importer skips known uids, reports taken addresses, commits in batches", arguments: StoreKind.available)
    func importer(kind: StoreKind) throws {
        let store = try kind.database().open()
        try store.write { try $0.insertAccount(Account(uid: "owner", email: try EmailAddress.parse("taken@example.com"), createdAt: 1)) }
        var rows = try (0..<7).map { i in
            ImportRow(line: i + 1, .success(Account(uid: "i\(i)", email: try EmailAddress.parse("i\(i)@example.com"), createdAt: 5)))
        }
        rows.append(ImportRow(line: 8, .success(Account(uid: "x", email: try EmailAddress.parse("TAKEN@example.com"), createdAt: 5))))
        rows.append(ImportRow(line: 9, .failure(ImportProblem("invalid email"))))
        rows.append(ImportRow(line: 10, .success(Account(uid: "i0", email: try EmailAddress.parse("other@example.com"), createdAt: 5))))
        let importer = AccountImporter(store: store, batchSize: 3)
        let strict = try importer.run(rows, strict: true)
        #expect(strict.abandoned && strict.imported == 0)
        let dry = try importer.run(rows, dryRun: true)
        #expect(dry.imported == 7 && dry.skipped == 1)
        #expect(try store.read { try $0.account(uid: "i0") } == nil, "a dry run writes nothing")
        var batches: [Int] = []
        let summary = try importer.run(rows) { batches.append($0) }
        #expect(summary.imported == 7 && summary.skipped == 1 && summary.rows == 10)
        #expect(summary.conflicts == [.init(line: 8, reason: "address held by another account")])
        #expect(summary.malformed == [.init(line: 9, reason: "invalid email")])
        #expect(batches == [4, 7, 10])
        #expect(try store.read { try $0.account(address: EmailAddress.parse("taken@example.com")) }?.uid == "owner")
        #expect(try store.read { try $0.account(uid: "i0") }?.email?.address == "i0@example.com", "the repeat did not overwrite")
        let again = try importer.run(rows)
        #expect(again.imported == 0 && again.skipped == 8)
    }
}
