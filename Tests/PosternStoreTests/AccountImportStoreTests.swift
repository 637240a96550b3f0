import Foundation
import PosternCore
import PosternCrypto
@testable import PosternStore
import Testing
import PosternTestSupport

@Suite("Account import and export, on each store")
struct AccountImportStoreTests {
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
}
