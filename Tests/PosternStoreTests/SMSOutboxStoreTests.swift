import Foundation
import PosternCore
@testable import PosternPostgres
@testable import PosternStore
import PosternSQL
import PosternTestSupport
import Testing

/// What the SMS outbox keeps in its columns on each real store: the number sealed, and erased once
/// the message is finished or the claim settled. Its behaviour through the Store API is the store
/// contract's (SMSOutboxContract), on the in-memory store too.
@Suite("SMS outbox, on each store")
struct SMSOutboxStoreTests {
    static func rawRecipient(_ database: TestDatabase, _ table: String, _ id: SQLValue) throws -> [UInt8]? {
        try database.withSQL { db in try db.first("SELECT recipient FROM \(table) WHERE id = ?", [id]) { $0.blob(0) } ?? nil }
    }

    @Test("in the database the number is sealed: neither its digits nor its text are there; the column is NULL once sent", arguments: StoreKind.available)
    func numberSealedThenErased(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        let store = fixture.store
        let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        let id = try store.write { try $0.enqueueSMS(.phoneClaim(claimID: "c1"), recipient: de, now: 100, giveUpAt: 700) }
        let raw = try #require(try Self.rawRecipient(fixture.database, "sms_outbox", .integer(id)))
        #expect(raw.count > de.e164.utf8.count)
        #expect(!String(decoding: raw, as: UTF8.self).contains("15112345678"))
        #expect(!raw.split(separator: 0).contains { $0.count >= 11 && String(decoding: $0, as: UTF8.self).contains("4915112345678") })
        let claimed = try store.write { try $0.claimDue(.sms, owner: "a:0", now: 110, leaseUntil: 260, limit: 1) }
        #expect(claimed.map(\.id) == [id])
        #expect(try store.write { try $0.markSent(.sms, id: id, owner: "a:0", now: 112, reply: "HTTP 201 SM1") })
        #expect(try Self.rawRecipient(fixture.database, "sms_outbox", .integer(id)) == nil, "the column itself is NULL")
    }

    @Test("a claim keeps its number sealed until settled, then its column is NULL", arguments: StoreKind.available)
    func claimNumberSealedThenErased(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        let store = fixture.store
        let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        let claim = PhoneClaim(
            id: "k1", uid: nil, numberHash: Array(repeating: 1, count: 32), countryCode: "49", codeHash: Array(repeating: 7, count: 32),
            createdAt: 100, codeExpiresAt: 700, expiresAt: 700)
        let kept = try store.write { tx -> Bool in
            try tx.insertPhoneClaim(claim)
            return try tx.keepNumber(de, ofClaim: "k1")
        }
        #expect(kept)
        let raw = try #require(try Self.rawRecipient(fixture.database, "phone_claims", .text("k1")))
        #expect(!String(decoding: raw, as: UTF8.self).contains("15112345678"))
        try store.write { try $0.forgetNumber(ofClaim: "k1") }
        #expect(try Self.rawRecipient(fixture.database, "phone_claims", .text("k1")) == nil)
    }

    @Test("a store opened without the master key's seal refuses to queue an SMS", arguments: StoreKind.available)
    func withoutSeal(kind: StoreKind) throws {
        let database = try kind.database()
        let store: any Store
        switch kind {
        case .sqlite: store = try SQLiteStore(path: database.location)
        case .postgres: store = try PostgresStore(connectionString: database.location)
        }
        let number = try PhoneNumber.parse("+4915112345678", defaultRegion: nil)
        #expect(throws: StoreError.self) { try store.write { try $0.enqueueSMS(.test(reference: "t"), recipient: number, now: 1, giveUpAt: 2) } }
        #expect(try store.read { try $0.smsMessages(state: nil, limit: 10) }.isEmpty)
    }
}
