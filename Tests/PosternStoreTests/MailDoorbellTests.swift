import Foundation
import PosternCore
@testable import PosternStore
import Synchronization
import Testing

@Suite("The mail doorbell")
struct MailDoorbellTests {
    final class Rings: Sendable {
        private let count = Mutex(0)
        func ring() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    @Test("rung once after a commit that queued mail; not for other writes, nor for a closure that threw", arguments: StoreKind.available)
    func ringsAfterCommitsThatQueuedMail(kind: StoreKind) throws {
        let store = try kind.database().open()
        let rings = Rings()
        store.mailDoorbell.listen { rings.ring() }
        let address = try EmailAddress.parse("a@example.com")
        _ = try store.write { tx in try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000) }
        #expect(rings.value == 1)
        // A write that queues nothing rings nothing.
        try store.write { tx in try tx.insertAccount(Account(uid: "u1", createdAt: 1000)) }
        #expect(rings.value == 1)
        // A closure that queued mail and then threw left nothing behind: no ring.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            _ = try store.write { tx -> Int64 in
                _ = try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
                throw Refused()
            }
        }
        #expect(rings.value == 1)
        #expect(try store.read { try $0.outboxCounts() }[.queued] == 1)
        // Two enqueues in one closure: one commit, one ring.
        _ = try store.write { tx in
            _ = try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
            return try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
        }
        #expect(rings.value == 2)
        store.close()
    }
}
