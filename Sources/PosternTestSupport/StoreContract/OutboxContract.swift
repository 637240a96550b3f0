import PosternCore
import PosternCrypto
import Synchronization

/// The mail outbox (``OutboxWriter`` and the lease queue ``LeasedQueue/mail``), its doorbell and
/// its delivery log. What needs the raw columns (the body erased) or a second connection to the
/// same database (two processes claiming at once) stays in the real stores' own tests.
enum OutboxContract {
    static let alice = EmailAddress.restored(localPart: "Alice", domain: "example.com")

    static func mail(_ token: String) -> OutgoingMail {
        OutgoingMail(
            storedMessageID: "<\(token)@example.com>",
            envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["Alice@example.com", "cc@example.com"]),
            bytes: Array("Subject: \(token)\r\n\r\n.leading dot\r\n".utf8) + [0, 255])
    }

    static func enqueue(_ store: any Store, _ count: Int, now: Int64 = 100, giveUpAt: Int64 = 10_000) throws -> [Int64] {
        try store.write { writer in
            try (0..<count).map { try writer.enqueue(.signIn(requestID: "r\($0)"), recipient: alice, now: now, giveUpAt: giveUpAt) }
        }
    }

    static func attempt(_ id: Int64, _ hash: [UInt8], at: Int64, code: Int?, reply: String, outcome: OutboxAttempt.Outcome) -> OutboxAttempt {
        OutboxAttempt(
            messageID: id, recipientHash: hash, attemptedAt: at, durationMilliseconds: 12, transport: "smtp://mail.example:587",
            replyCode: code, reply: reply, outcome: outcome)
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("outbox", "a message is queued with its intent and recipient, and listed without a body") { store in
            let ids = try enqueue(store, 3)
            let listed = try store.read { try $0.outboxMessages(state: nil, limit: 2) }
            try expectContract(listed.map(\.id), equals: [ids[2], ids[1]], "listed ids, newest first")
            let first = try store.read { try $0.outboxMessage(id: ids[0]) }
            try expectContract(first?.intent, equals: .signIn(requestID: "r0"), "intent")
            try expectContract(first?.recipient.localPart, equals: "Alice", "recipient")
            try expectContract(
                first?.state == .queued && first?.attempts == 0 && first?.nextAttemptAt == 100 && first?.giveUpAt == 10_000,
                "queued, no attempt, due at once, given up at its deadline")
            try expectContract(try store.read { try $0.outboxCounts() }, equals: OutboxCounts(byState: [.queued: 3]), "counts")
        },
        StoreContractCase("outbox", "a bounce is recorded on its message and listed with it; a delay never replaces a failure; no message, no record") {
            store in
            let ids = try enqueue(store, 2)
            let delayed = OutboxBounce(kind: .delayed, status: "4.4.1", detail: "451 later", at: 200)
            let failed = OutboxBounce(kind: .failed, status: "5.1.1", detail: "unknown user: \"<recipient>\"", at: 300)
            try expectContract(try store.write { try $0.recordBounce(id: ids[0], delayed) }, "the delay is recorded")
            try expectContract(try store.read { try $0.outboxMessage(id: ids[0]) }?.bounce, equals: delayed, "bounce")
            try expectContract(try store.write { try $0.recordBounce(id: ids[0], failed) }, "a failure replaces the delay")
            try expectContract(
                try store.write { try $0.recordBounce(id: ids[0], OutboxBounce(kind: .delayed, status: "4.0.0", detail: "", at: 400)) } == false,
                "a delay never replaces a failure")
            try expectContract(
                try store.read { try $0.outboxMessages(state: nil, limit: 5) }.first { $0.id == ids[0] }?.bounce, equals: failed, "listed bounce")
            try expectContract(try store.read { try $0.outboxMessage(id: ids[1]) }?.bounce == nil, "the other message has none")
            try expectContract(try store.write { try $0.recordBounce(id: 999_999, failed) } == false, "no message, no record")
        },
        StoreContractCase("outbox", "claiming is oldest due first, limited, and leased; a live lease is not claimed again") { store in
            let ids = try enqueue(store, 5)
            let first = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 3) }
            try expectContract(first.map(\.message.id), equals: Array(ids.prefix(3)), "first claim")
            try expectContract(
                first.allSatisfy { $0.message.state == .claimed && $0.message.nextAttemptAt == 160 && $0.mail == nil && !$0.isSuppressed },
                "claimed, leased until 160, nothing stored, not suppressed")
            let second = try store.write { try $0.claimDue(.mail, owner: "w2", now: 100, leaseUntil: 160, limit: 10) }
            try expectContract(second.map(\.message.id), equals: Array(ids.suffix(2)), "second claim")
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "w3", now: 159, leaseUntil: 219, limit: 10) }.isEmpty, "leased")
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "w3", now: 99, leaseUntil: 219, limit: 10) }.isEmpty, "not due")
        },
        StoreContractCase("outbox", "the stored mail comes back byte for byte on the next claim, and the message keeps its id once sent") { store in
            let id = try enqueue(store, 1)[0]
            _ = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 1) }
            let composed = mail("tok1")
            try expectContract(try store.write { try $0.storeMail(id: id, owner: "w1", mail: composed) }, "the holder stores the mail")
            try expectContract(try store.write { try $0.storeMail(id: id, owner: "intruder", mail: mail("x")) } == false, "no one else does")
            try expectContract(try store.write { try $0.markRetry(.mail, id: id, owner: "w1", at: 130, reply: "451 4.3.0 later") }, "retry")
            let retried = try store.read { try $0.outboxMessage(id: id) }
            try expectContract(
                retried?.state == .retrying && retried?.attempts == 1 && retried?.lastReply == "451 4.3.0 later"
                    && retried?.messageID == "<tok1@example.com>", "retrying, one attempt, its reply and message id")
            let again = try store.write { try $0.claimDue(.mail, owner: "w2", now: 130, leaseUntil: 190, limit: 1) }
            try expectContract(again.first?.mail, equals: composed, "the stored mail")
            try expectContract(try store.write { try $0.markSent(.mail, id: id, owner: "w2", now: 131, reply: "250 2.0.0 queued") }, "sent")
            let sent = try store.read { try $0.outboxMessage(id: id) }
            try expectContract(
                sent?.state == .sent && sent?.attempts == 2 && sent?.finishedAt == 131 && sent?.lastReply == "250 2.0.0 queued",
                "sent, two attempts, finished at 131 with its reply")
        },
        StoreContractCase("outbox", "only the lease holder can finish a message; an expired lease lets another worker take it") { store in
            let id = try enqueue(store, 1)[0]
            _ = try store.write { try $0.claimDue(.mail, owner: "crashed", now: 100, leaseUntil: 160, limit: 1) }
            let taken = try store.write { try $0.claimDue(.mail, owner: "w2", now: 160, leaseUntil: 220, limit: 1) }
            try expectContract(taken.map(\.message.id), equals: [id], "taken after the lease")
            try expectContract(try store.write { try $0.markSent(.mail, id: id, owner: "crashed", now: 161, reply: "250") } == false, "sent")
            try expectContract(try store.write { try $0.markDead(.mail, id: id, owner: "crashed", now: 161, reply: "550") } == false, "dead")
            try expectContract(try store.write { try $0.markRetry(.mail, id: id, owner: "crashed", at: 999, reply: "451") } == false, "retry")
            try store.write { try $0.extendLeases(owner: "w2", leaseUntil: 400) }
            try expectContract(
                try store.write { try $0.claimDue(.mail, owner: "w3", now: 300, leaseUntil: 360, limit: 1) }.isEmpty, "the extended lease holds")
            try expectContract(try store.write { try $0.releaseLeases(owner: "w2", ids: [id], at: 300) }, equals: 1, "released")
            let released = try store.read { try $0.outboxMessage(id: id) }
            try expectContract(released?.state == .queued && released?.nextAttemptAt == 300, "queued again, due at 300")
        },
        StoreContractCase("outbox", "suppression is by normalized address; only dead messages are retried; purge takes the finished") { store in
            let ids = try enqueue(store, 2)
            _ = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 2) }
            _ = try store.write { try $0.storeMail(id: ids[0], owner: "w1", mail: mail("dead")) }
            let marked = try store.write { writer in
                let dead = try writer.markDead(.mail, id: ids[0], owner: "w1", now: 101, reply: "550 5.1.1 unknown user")
                try writer.suppress(alice, reason: "550 5.1.1 unknown user", now: 101)
                try writer.suppress(alice, reason: "again", now: 102)
                return [dead, try writer.markSent(.mail, id: ids[1], owner: "w1", now: 101, reply: "250")]
            }
            try expectContract(marked, equals: [true, true], "dead and sent")
            try expectContract(
                try store.read { try $0.isSuppressed(EmailAddress.restored(localPart: "alice", domain: "example.com")) }, "suppressed")
            try expectContract(try store.read { try $0.outboxCounts() }, equals: OutboxCounts(byState: [.dead: 1, .sent: 1]), "counts")
            try expectContract(try store.write { try $0.retryDead(id: ids[1], now: 200) } == false, "only dead messages are retried")
            try expectContract(try store.write { try $0.retryDead(id: ids[0], now: 200) }, "the dead one is")
            let claim = try store.write { try $0.claimDue(.mail, owner: "w1", now: 200, leaseUntil: 260, limit: 5) }
            try expectContract(claim.count == 1 && claim.first?.isSuppressed == true && claim.first?.mail == nil, "claimed again, suppressed, no mail")
            try expectContract(try store.write { try $0.unsuppress(alice) }, "unsuppressed")
            try expectContract(try store.read { try $0.isSuppressed(alice) } == false, "no longer suppressed")
            try expectContract(try store.write { try $0.purgeFinished(.mail, before: 102, limit: 500) }, equals: 1, "purged")
            try expectContract(try store.read { try $0.outboxCounts() }, equals: OutboxCounts(byState: [.claimed: 1]), "counts after the purge")
        },
        // The in-memory store's own outbox tests (PosternCoreTests), now on every store.
        StoreContractCase("outbox", "claim, store the body, retry with the same body, send and erase it") { store in
            let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")
            let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
            let first = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 10) }
            try expectContract(first.map(\.message.id) == [id] && first.first?.mail == nil && first.first?.message.state == .claimed, "claimed")
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "w2", now: 100, leaseUntil: 160, limit: 10) }.isEmpty, "leased")
            let composed = OutgoingMail(
                storedMessageID: "<m1@example.com>", envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["alice@example.com"]),
                bytes: Array("body m1\r\n".utf8))
            try expectContract(try store.write { try $0.storeMail(id: id, owner: "w1", mail: composed) }, "stored")
            try expectContract(try store.write { try $0.markRetry(.mail, id: id, owner: "w1", at: 130, reply: "451 later") }, "retry")
            try expectContract(
                try store.write { try $0.claimDue(.mail, owner: "w2", now: 129, leaseUntil: 190, limit: 10) }.isEmpty, "not due before 130")
            let second = try store.write { try $0.claimDue(.mail, owner: "w2", now: 130, leaseUntil: 190, limit: 10) }
            try expectContract(second.first?.mail, equals: composed, "the same mail")
            try expectContract(
                try store.write { try $0.markSent(.mail, id: id, owner: "w1", now: 131, reply: "250 ok") } == false, "a lost lease changes nothing")
            try expectContract(try store.write { try $0.markSent(.mail, id: id, owner: "w2", now: 131, reply: "250 ok") }, "sent")
            let record = try store.read { try $0.outboxMessage(id: id) }
            try expectContract(
                record?.state == .sent && record?.attempts == 2 && record?.lastReply == "250 ok" && record?.messageID == "<m1@example.com>",
                "sent, two attempts, its reply and message id")
            try expectContract(try store.read { try $0.outboxCounts() }[.sent], equals: 1, "one sent")
        },
        StoreContractCase("outbox", "an expired lease makes a message claimable; release gives it back at once") { store in
            let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")
            let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
            _ = try store.write { try $0.claimDue(.mail, owner: "dead-worker", now: 100, leaseUntil: 160, limit: 10) }
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "w2", now: 159, leaseUntil: 219, limit: 10) }.isEmpty, "leased")
            try expectContract(try store.write { try $0.claimDue(.mail, owner: "w2", now: 160, leaseUntil: 220, limit: 10) }.count, equals: 1, "taken")
            try expectContract(try store.write { try $0.releaseLeases(owner: "w2", ids: [id], at: 170) }, equals: 1, "released")
            try expectContract(try store.read { try $0.outboxMessages(state: .queued, limit: 10) }.count, equals: 1, "queued again")
        },
        StoreContractCase("outbox", "dead with suppression, retry of the dead, purge of the finished") { store in
            let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")
            let id = try store.write { try $0.enqueue(.signIn(requestID: "r1"), recipient: alice, now: 100, giveUpAt: 700) }
            _ = try store.write { try $0.claimDue(.mail, owner: "w1", now: 100, leaseUntil: 160, limit: 10) }
            try store.write { writer in
                _ = try writer.markDead(.mail, id: id, owner: "w1", now: 101, reply: "550 no")
                try writer.suppress(EmailAddress.restored(localPart: "ALICE", domain: "example.com"), reason: "550 no", now: 101)
            }
            try expectContract(try store.read { try $0.isSuppressed(alice) }, "suppressed")
            try expectContract(try store.write { try $0.retryDead(id: id, now: 200) }, "retried")
            let again = try store.write { try $0.claimDue(.mail, owner: "w1", now: 200, leaseUntil: 260, limit: 10) }
            try expectContract(again.first?.isSuppressed, equals: true, "claimed as suppressed")
            _ = try store.write { try $0.markDead(.mail, id: id, owner: "w1", now: 201, reply: "suppressed") }
            try expectContract(try store.write { try $0.purgeFinished(.mail, before: 201, limit: 500) }, equals: 0, "not finished before 201")
            try expectContract(try store.write { try $0.purgeFinished(.mail, before: 202, limit: 500) }, equals: 1, "finished before 202")
            try expectContract(try store.read { try $0.outboxCounts() }.unfinished, equals: 0, "nothing unfinished")
            try expectContract(try store.read { try $0.outboxMessage(id: id) } == nil, "the purged message is gone")
        },
        StoreContractCase("outbox", "the doorbell rings once after a commit that queued mail; not for other writes, nor for a closure that threw") {
            store in
            let rings = Counter()
            store.mailDoorbell.listen { rings.increment() }
            let address = try EmailAddress.parse("a@example.com")
            _ = try store.write { tx in try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000) }
            try expectContract(rings.value, equals: 1, "rings after the first enqueue")
            // A write that queues nothing rings nothing.
            try store.write { tx in try tx.insertAccount(Account(uid: "u1", createdAt: 1000)) }
            try expectContract(rings.value, equals: 1, "rings after a write that queued nothing")
            // A closure that queued mail and then threw left nothing behind: no ring.
            struct Refused: Error {}
            do {
                _ = try store.write { tx -> Int64 in
                    _ = try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
                    throw Refused()
                }
                try expectContract(false, "the closure's error is thrown")
            } catch is Refused {}
            try expectContract(rings.value, equals: 1, "rings after a closure that threw")
            try expectContract(try store.read { try $0.outboxCounts() }[.queued], equals: 1, "queued")
            // Two enqueues in one closure: one commit, one ring.
            _ = try store.write { tx in
                _ = try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
                return try tx.enqueue(.passwordChanged(uid: "u1"), recipient: address, now: 1000, giveUpAt: 2000)
            }
            try expectContract(rings.value, equals: 2, "rings after two enqueues in one commit")
        },
        StoreContractCase(
            "outbox", "delivery log: attempts come back per message in order, messages by hash newest first, and purge takes the old ones only"
        ) { store in
            let key = try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 3, count: 32)))
            let ann = key.hash(try EmailAddress.parse("Ann@Example.com"))
            let bob = key.hash(try EmailAddress.parse("bob@example.com"))
            // The same address, however written, hashes the same; another does not.
            try expectContract(ann == key.hash(try EmailAddress.parse("ann@example.com")) && ann != bob && ann.count == 16, "hashes")
            let first = attempt(1, ann, at: 100, code: 451, reply: "451 4.3.0 try again later", outcome: .deferred)
            let second = attempt(1, ann, at: 130, code: 250, reply: "250 2.0.0 accepted", outcome: .sent)
            try store.write { tx in
                try tx.recordOutboxAttempt(second)
                try tx.recordOutboxAttempt(first)
                try tx.recordOutboxAttempt(attempt(2, bob, at: 140, code: nil, reply: "curl error 7", outcome: .deferred))
                try tx.recordOutboxAttempt(attempt(3, ann, at: 150, code: 550, reply: "550 5.1.1 <address> rejected", outcome: .failed))
            }
            try expectContract(try store.read { try $0.outboxAttempts(messageID: 1) }, equals: [first, second], "message 1's attempts")
            try expectContract(try store.read { try $0.outboxAttempts(messageID: 2) }.first?.replyCode == nil, "no reply code")
            try expectContract(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 10) }, equals: [3, 1], "ann's messages")
            try expectContract(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 1) }, equals: [3], "at most the limit")
            try expectContract(
                try store.read { try $0.outboxMessageIDs(recipientHash: Array(repeating: 0, count: 16), limit: 10) }.isEmpty, "no such hash")
            // Under another master key the same address hashes elsewhere: a copy of the database and
            // a list of addresses find nothing without the key file.
            let other = try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 4, count: 32)))
            try expectContract(
                try store.read { try $0.outboxMessageIDs(recipientHash: other.hash(try EmailAddress.parse("ann@example.com")), limit: 10) }.isEmpty,
                "another key finds nothing")
            try expectContract(try store.write { try $0.purgeOutboxAttempts(before: 131, limit: 1) }, equals: 1, "one purged, at most the limit")
            try expectContract(try store.write { try $0.purgeOutboxAttempts(before: 131, limit: 10) }, equals: 1, "the other old one")
            try expectContract(try store.read { try $0.outboxAttempts(messageID: 1) }.isEmpty, "message 1's attempts purged")
            try expectContract(try store.read { try $0.outboxMessageIDs(recipientHash: ann, limit: 10) }, equals: [3], "the recent one is kept")
        },
    ]
}

