import Foundation
import PosternCore
import Testing
import PosternTestSupport

/// The in-memory fake follows the SQLite store's outbox rules, so Core's tests can rely on it.
@Suite("In-memory outbox")
struct OutboxInMemoryStoreTests {
    let store = InMemoryStore()
    let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")

    func mail(_ id: String) -> OutgoingMail {
        OutgoingMail(storedMessageID: "<\(id)@example.com>", envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["alice@example.com"]), bytes: Array("body \(id)\r\n".utf8))
    }

    @Test("claim, store the body, retry with the same body, send and erase it")
    func life() throws {
        let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
        let first = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 10) }
        #expect(first.map(\.message.id) == [id] && first.first?.mail == nil && first.first?.message.state == .claimed)
        #expect(try store.write { try $0.claimDue(.mail, owner: "w2", now: 100, leaseUntil: 160, limit: 10) }.isEmpty)
        let composed = mail("m1")
        #expect(try store.write { try $0.storeMail(id: id, owner: "w1", mail: composed) })
        #expect(try store.write { try $0.markRetry(.mail, id: id, owner: "w1", at: 130, reply: "451 later") })
        #expect(try store.write { try $0.claimDue(.mail, owner: "w2", now: 129, leaseUntil: 190, limit: 10) }.isEmpty)
        let second = try store.write { try $0.claimDue(.mail, owner: "w2", now: 130, leaseUntil: 190, limit: 10) }
        #expect(second.first?.mail == composed)
        #expect(try store.write { try $0.markSent(.mail, id: id, owner: "w1", now: 131, reply: "250 ok") } == false, "a lost lease changes nothing")
        #expect(try store.write { try $0.markSent(.mail, id: id, owner: "w2", now: 131, reply: "250 ok") })
        let record = try store.read { try $0.outboxMessage(id: id) }
        #expect(record?.state == .sent && record?.attempts == 2 && record?.lastReply == "250 ok" && record?.messageID == "<m1@example.com>")
        #expect(try store.read { try $0.outboxCounts() }[.sent] == 1)
    }

    @Test("an expired lease makes a message claimable; release gives it back at once")
    func leases() throws {
        let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
        _ = try store.write { try $0.claimDue(.mail, owner: "dead-worker", now: 100, leaseUntil: 160, limit: 10) }
        #expect(try store.write { try $0.claimDue(.mail, owner: "w2", now: 159, leaseUntil: 219, limit: 10) }.isEmpty)
        #expect(try store.write { try $0.claimDue(.mail, owner: "w2", now: 160, leaseUntil: 220, limit: 10) }.count == 1)
        #expect(try store.write { try $0.releaseLeases(owner: "w2", ids: [id], at: 170) } == 1)
        #expect(try store.read { try $0.outboxMessages(state: .queued, limit: 10) }.count == 1)
    }

    @Test("dead with suppression, retry of the dead, purge of the finished")
    func deadRetryPurge() throws {
        let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
        _ = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 10) }
        try store.write { writer in
            _ = try writer.markDead(.mail, id: id, owner: "w1", now: 101, reply: "550 no")
            try writer.suppress(EmailAddress.restored(localPart: "ALICE", domain: "example.com"), reason: "550 no", now: 101)
        }
        #expect(try store.read { try $0.isSuppressed(alice) })
        #expect(try store.write { try $0.retryDead(id: id, now: 200) })
        let again = try store.write { try $0.claimDue(.mail, owner: "w1", now: 200, leaseUntil: 260, limit: 10) }
        #expect(again.first?.isSuppressed == true)
        _ = try store.write { try $0.markDead(.mail, id: id, owner: "w1", now: 201, reply: "suppressed") }
        #expect(try store.write { try $0.purgeFinished(.mail, before: 201, limit: 500) } == 0)
        #expect(try store.write { try $0.purgeFinished(.mail, before: 202, limit: 500) } == 1)
        #expect(try store.read { try $0.outboxCounts() }.unfinished == 0)
        #expect(try store.read { try $0.outboxMessage(id: id) } == nil)
    }
}
