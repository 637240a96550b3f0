import Foundation
import PosternCore
import PosternCrypto
import Testing

@Suite("The delivery log: attempts per message, found by a keyed recipient hash, on each store")
struct DeliveryLogStoreTests {
    func attempt(_ id: Int64, _ hash: [UInt8], at: Int64, code: Int?, reply: String, outcome: OutboxAttempt.Outcome) -> OutboxAttempt {
        OutboxAttempt(
            messageID: id, recipientHash: hash, attemptedAt: at, durationMilliseconds: 12, transport: "smtp://mail.example:587",
            replyCode: code, reply: reply, outcome: outcome)
    }

    @Test("attempts come back per message in order, messages by hash newest first, and purge takes the old ones only", arguments: StoreKind.available)
    func log(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        let key = try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 3, count: 32)))
        let ann = key.hash(try EmailAddress.parse("Ann@Example.com"))
        let bob = key.hash(try EmailAddress.parse("bob@example.com"))
        // The same address, however written, hashes the same; another does not.
        #expect(ann == key.hash(try EmailAddress.parse("ann@example.com")) && ann != bob && ann.count == 16)
        let first = attempt(1, ann, at: 100, code: 451, reply: "451 4.3.0 try again later", outcome: .deferred)
        let second = attempt(1, ann, at: 130, code: 250, reply: "250 2.0.0 accepted", outcome: .sent)
        try store.write { tx in
            try tx.recordOutboxAttempt(second)
            try tx.recordOutboxAttempt(first)
            try tx.recordOutboxAttempt(attempt(2, bob, at: 140, code: nil, reply: "curl error 7", outcome: .deferred))
            try tx.recordOutboxAttempt(attempt(3, ann, at: 150, code: 550, reply: "550 5.1.1 <address> rejected", outcome: .failed))
        }
        #expect(try store.read { try $0.outboxAttempts(messageID: 1) } == [first, second])
        #expect(try store.read { try $0.outboxAttempts(messageID: 2) }.first?.replyCode == nil)
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 10) } == [3, 1])
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 1) } == [3])
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: Array(repeating: 0, count: 16), limit: 10) }.isEmpty)
        // Under another master key the same address hashes elsewhere: a copy of the database and
        // a list of addresses find nothing without the key file.
        let other = try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 4, count: 32)))
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: other.hash(try EmailAddress.parse("ann@example.com")), limit: 10) }.isEmpty)
        #expect(try store.write { try $0.purgeOutboxAttempts(before: 131, limit: 1) } == 1)
        #expect(try store.write { try $0.purgeOutboxAttempts(before: 131, limit: 10) } == 1)
        #expect(try store.read { try $0.outboxAttempts(messageID: 1) }.isEmpty)
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 10) } == [3])
    }
}
