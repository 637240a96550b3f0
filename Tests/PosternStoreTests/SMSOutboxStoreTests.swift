import Foundation
import PosternCore
@testable import PosternPostgres
@testable import PosternStore
import PosternTestSupport
import Synchronization
import Testing

/// The SMS outbox's life on each store (SQLite, PostgreSQL, and the in-memory twin the Core
/// tests use): the same scenario, the same answers.
@Suite("SMS outbox, on each store")
struct SMSOutboxStoreTests {
    final class Rings: Sendable {
        private let count = Mutex(0)
        func ring() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    static let claimable = DeliveryStateMachine.claimableStates

    /// The scenario every store must pass.
    static func lifecycle(_ store: any Store, rawRecipient: ((Int64) throws -> [UInt8]?)?) throws {
        let rings = Rings()
        store.mailDoorbell.listen { rings.ring() }
        let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        let us = try PhoneNumber.parse("+1 415 555 2671", defaultRegion: nil)
        let ids = try store.write { tx in
            [
                try tx.enqueueSMS(.phoneClaim(claimID: "c1"), recipient: de, now: 100, giveUpAt: 700),
                try tx.enqueueSMS(.phoneSignIn(requestID: "r1"), recipient: us, now: 101, giveUpAt: 700),
                try tx.enqueueSMS(.test(reference: "t1"), recipient: de, now: 102, giveUpAt: 700),
            ]
        }
        #expect(rings.value == 1, "one commit that queued SMS rings the doorbell once")
        #expect(ids.count == Set(ids).count)
        let listed = try store.read { try $0.smsMessages(state: nil, limit: 10) }
        #expect(listed.map(\.id) == ids.reversed(), "newest first")
        let first = try #require(try store.read { try $0.smsMessage(id: ids[0]) })
        #expect(first.intent == .phoneClaim(claimID: "c1"))
        #expect(first.recipient == de)
        #expect(first.countryCallingCode == "49")
        #expect(first.state == .queued)
        #expect(first.giveUpAt == 700)
        #expect(try store.read { try $0.smsMessages(state: .queued, limit: 2) }.count == 2)
        if let rawRecipient {
            // In the database the number is sealed: neither its digits nor its text are there.
            let raw = try #require(try rawRecipient(ids[0]))
            #expect(raw.count > de.e164.utf8.count)
            #expect(!String(decoding: raw, as: UTF8.self).contains("15112345678"))
            #expect(!raw.split(separator: 0).contains { $0.count >= 11 && String(decoding: $0, as: UTF8.self).contains("4915112345678") })
        }

        // A claim takes the oldest due, with a lease; a second claimer gets the rest only.
        let a = try store.write { try $0.claimDue(.sms, owner: "a:0", now: 110, leaseUntil: 260, limit: 2, claimable: claimable) }
        #expect(a.map(\.id) == [ids[0], ids[1]])
        #expect(a.allSatisfy { $0.state == .claimed && $0.nextAttemptAt == 260 })
        #expect(a[0].recipient == de, "a claimed message carries its number to the worker")
        let b = try store.write { try $0.claimDue(.sms, owner: "b:0", now: 110, leaseUntil: 260, limit: 5, claimable: claimable) }
        #expect(b.map(\.id) == [ids[2]])
        #expect(try store.write { try $0.claimDue(.sms, owner: "b:0", now: 110, leaseUntil: 260, limit: 5, claimable: claimable) }.isEmpty)

        // Only the lease holder records outcomes.
        #expect(try store.write { try $0.markSent(.sms, id: ids[0], owner: "b:0", now: 111, reply: "x") } == false)
        #expect(try store.write { try $0.markRetry(.sms, id: ids[1], owner: "a:0", at: 140, reply: "HTTP 503") })
        #expect(try store.write { try $0.markSent(.sms, id: ids[0], owner: "a:0", now: 112, reply: "HTTP 201 SM1") })
        #expect(try store.write { try $0.markSent(.sms, id: ids[0], owner: "a:0", now: 113, reply: "again") } == false)
        let sent = try #require(try store.read { try $0.smsMessage(id: ids[0]) })
        #expect(sent.state == .sent)
        #expect(sent.recipient == nil, "the number is erased once the message is finished")
        #expect(sent.countryCallingCode == "49")
        #expect(sent.lastReply == "HTTP 201 SM1")
        #expect(sent.attempts == 1)
        #expect(sent.finishedAt == 112)
        if let rawRecipient { #expect(try rawRecipient(ids[0]) == nil, "the column itself is NULL") }

        // The retry is not due before its time; then it is claimed again with its attempt counted.
        let retrying = try #require(try store.read { try $0.smsMessage(id: ids[1]) })
        #expect(retrying.state == .retrying)
        #expect(retrying.attempts == 1)
        #expect(retrying.recipient == us, "kept while it may still be sent")
        #expect(try store.write { try $0.claimDue(.sms, owner: "a:0", now: 139, leaseUntil: 300, limit: 5, claimable: claimable) }.isEmpty)
        let again = try store.write { try $0.claimDue(.sms, owner: "a:0", now: 140, leaseUntil: 300, limit: 5, claimable: claimable) }
        #expect(again.map(\.id) == [ids[1]])
        #expect(try store.write { try $0.markDead(.sms, id: ids[1], owner: "a:0", now: 141, reply: "HTTP 400 code 21211") })
        let dead = try #require(try store.read { try $0.smsMessage(id: ids[1]) })
        #expect(dead.state == .dead)
        #expect(dead.lastReply == "HTTP 400 code 21211")
        #expect(dead.recipient == nil)
        #expect(dead.attempts == 1, "a dead outcome counts no attempt (as the outbox's)")

        // An expired lease is claimable by another worker; the old holder can no longer finish it.
        let taken = try store.write { try $0.claimDue(.sms, owner: "c:0", now: 260, leaseUntil: 400, limit: 5, claimable: claimable) }
        #expect(taken.map(\.id) == [ids[2]])
        #expect(try store.write { try $0.markSent(.sms, id: ids[2], owner: "b:0", now: 261, reply: "late") } == false)
        #expect(try store.write { try $0.markSent(.sms, id: ids[2], owner: "c:0", now: 262, reply: "HTTP 201") })

        // Purge: finished before the horizon only, at most `limit`.
        #expect(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 112, limit: 10) } == 0)
        #expect(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 200, limit: 1) } == 1)
        #expect(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 300, limit: 10) } == 2)
        #expect(try store.read { try $0.smsMessages(state: nil, limit: 10) }.isEmpty)
    }

    @Test("queued with its doorbell, claimed under a lease, finished by the holder only, number erased, purged", arguments: StoreKind.available)
    func lifecycleOnStore(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        try Self.lifecycle(fixture.store) { id in
            try fixture.database.withSQL { db in try db.first("SELECT recipient FROM sms_outbox WHERE id = ?", [.integer(id)]) { $0.blob(0) } ?? nil }
        }
    }

    @Test("the in-memory twin passes the same scenario")
    func lifecycleInMemory() throws {
        try Self.lifecycle(InMemoryStore(), rawRecipient: nil)
    }

    /// A claim keeps its number sealed until settled; an SMS to it is queued from the sealed copy.
    static func claimNumber(_ store: any Store, rawKept: ((String) throws -> [UInt8]?)?) throws {
        let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        let claim = PhoneClaim(
            id: "k1", uid: nil, numberHash: Array(repeating: 1, count: 32), countryCode: "49", codeHash: Array(repeating: 7, count: 32),
            createdAt: 100, codeExpiresAt: 700, expiresAt: 700)
        let kept = try store.write { tx -> Bool in
            try tx.insertPhoneClaim(claim)
            return try tx.keepNumber(de, ofClaim: "k1")
        }
        #expect(kept)
        #expect(try !store.write { try $0.keepNumber(de, ofClaim: "nope") })
        if let rawKept {
            let raw = try #require(try rawKept("k1"))
            #expect(!String(decoding: raw, as: UTF8.self).contains("15112345678"))
        }
        #expect(try store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "k1"), toNumberOfClaim: "k1", now: 200, giveUpAt: 900) })
        let queued = try #require(try store.read { try $0.smsMessages(state: nil, limit: 10) }.first)
        #expect(queued.intent == .phoneTransferNotice(claimID: "k1") && queued.recipient == de && queued.countryCallingCode == "49")
        #expect(queued.giveUpAt == 900 && queued.state == .queued)
        // Settled: the number is erased, and nothing more can be sent to it.
        try store.write { try $0.forgetNumber(ofClaim: "k1") }
        if let rawKept { #expect(try rawKept("k1") == nil) }
        #expect(try !store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "k1"), toNumberOfClaim: "k1", now: 201, giveUpAt: 900) })
        #expect(try !store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "none"), toNumberOfClaim: "none", now: 201, giveUpAt: 900) })
        #expect(try store.read { try $0.smsMessages(state: nil, limit: 10) }.count == 1)
    }

    @Test("a claim keeps its number sealed until settled; a notice is queued from it", arguments: StoreKind.available)
    func claimNumberOnStore(kind: StoreKind) throws {
        let fixture = try OutboxFixture(kind)
        try Self.claimNumber(fixture.store) { id in
            try fixture.database.withSQL { db in try db.first("SELECT recipient FROM phone_claims WHERE id = ?", [.text(id)]) { $0.blob(0) } ?? nil }
        }
    }

    @Test("the in-memory twin keeps a claim's number alike")
    func claimNumberInMemory() throws {
        try Self.claimNumber(InMemoryStore(), rawKept: nil)
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

    @Test("a dead daemon's SMS claims are taken back with its heartbeat", arguments: StoreKind.available)
    func reclaim(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        let number = try PhoneNumber.parse("+4915112345678", defaultRegion: nil)
        _ = try store.write { tx in
            try (0..<3).map { try tx.enqueueSMS(.test(reference: "t\($0)"), recipient: number, now: 100, giveUpAt: 1000) }
        }
        _ = try store.write { try $0.claimDue(.sms, owner: "box:1:5:sms", now: 100, leaseUntil: 250, limit: 2, claimable: Self.claimable) }
        let dead = DaemonHeartbeat(owner: "box:1:5", host: "box", pid: 1, startedAt: 50, beatAt: 100)
        try store.write { try $0.beat(dead) }
        let reclaimed = try store.write { try $0.reclaimClaims(of: dead, now: 110) }
        #expect(reclaimed == ReclaimedClaims(sms: 2, owners: 1))
        let retaken = try store.write { try $0.claimDue(.sms, owner: "live:0", now: 110, leaseUntil: 300, limit: 5, claimable: Self.claimable) }
        #expect(retaken.count == 3)
    }
}
