import PosternCore

/// The SMS outbox (``SMSOutboxWriter`` and the lease queue ``LeasedQueue/sms``). That the number
/// is sealed in the database, and erased from its column, the real stores' own tests check.
public enum SMSOutboxContract {
    static let claimable = DeliveryStateMachine.claimableStates

    /// A phone claim (`k1`, +49) whose number is kept until it is settled: the cases' and the real
    /// stores' column checks' fixture.
    public static let keptClaim = PhoneClaim(
        id: "k1", uid: nil, numberHash: Array(repeating: 1, count: 32), countryCode: "49", codeHash: Array(repeating: 7, count: 32),
        createdAt: 100, codeExpiresAt: 700, expiresAt: 700)

    static let cases: [StoreContractCase] = [
        StoreContractCase("sms outbox", "queued with its doorbell, claimed under a lease, finished by the holder only, number erased, purged") {
            store in
            let rings = Counter()
            store.mailDoorbell.listen { rings.increment() }
            let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
            let us = try PhoneNumber.parse("+1 415 555 2671", defaultRegion: nil)
            let ids = try store.write { tx in
                [
                    try tx.enqueueSMS(.phoneClaim(claimID: "c1"), recipient: de, now: 100, giveUpAt: 700),
                    try tx.enqueueSMS(.phoneSignIn(requestID: "r1"), recipient: us, now: 101, giveUpAt: 700),
                    try tx.enqueueSMS(.test(reference: "t1"), recipient: de, now: 102, giveUpAt: 700),
                ]
            }
            try expectContract(rings.value, equals: 1, "one commit that queued SMS rings the doorbell once")
            try expectContract(ids.count, equals: Set(ids).count, "distinct ids")
            let listed = try store.read { try $0.smsMessages(state: nil, limit: 10) }
            try expectContract(listed.map(\.id), equals: ids.reversed(), "newest first")
            let first = try requireContract(try store.read { try $0.smsMessage(id: ids[0]) }, "the first message")
            try expectContract(first.intent, equals: .phoneClaim(claimID: "c1"), "intent")
            try expectContract(first.recipient, equals: de, "recipient")
            try expectContract(first.countryCallingCode, equals: "49", "country calling code")
            try expectContract(first.state, equals: .queued, "state")
            try expectContract(first.giveUpAt, equals: 700, "give up at")
            try expectContract(try store.read { try $0.smsMessages(state: .queued, limit: 2) }.count, equals: 2, "queued, at most the limit")

            // A claim takes the oldest due, with a lease; a second claimer gets the rest only.
            let a = try store.write { try $0.claimDue(.sms, owner: "a:0", now: 110, leaseUntil: 260, limit: 2, claimable: claimable) }
            try expectContract(a.map(\.id), equals: [ids[0], ids[1]], "first claim")
            try expectContract(a.allSatisfy { $0.state == .claimed && $0.nextAttemptAt == 260 }, "claimed, leased until 260")
            try expectContract(a.first?.recipient, equals: de, "a claimed message carries its number to the worker")
            let b = try store.write { try $0.claimDue(.sms, owner: "b:0", now: 110, leaseUntil: 260, limit: 5, claimable: claimable) }
            try expectContract(b.map(\.id), equals: [ids[2]], "second claim")
            try expectContract(
                try store.write { try $0.claimDue(.sms, owner: "b:0", now: 110, leaseUntil: 260, limit: 5, claimable: claimable) }.isEmpty,
                "nothing left")

            // Only the lease holder records outcomes.
            try expectContract(try store.write { try $0.markSent(.sms, id: ids[0], owner: "b:0", now: 111, reply: "x") } == false, "not b's")
            try expectContract(try store.write { try $0.markRetry(.sms, id: ids[1], owner: "a:0", at: 140, reply: "HTTP 503") }, "retry")
            try expectContract(try store.write { try $0.markSent(.sms, id: ids[0], owner: "a:0", now: 112, reply: "HTTP 201 SM1") }, "sent")
            try expectContract(
                try store.write { try $0.markSent(.sms, id: ids[0], owner: "a:0", now: 113, reply: "again") } == false, "sent only once")
            let sent = try requireContract(try store.read { try $0.smsMessage(id: ids[0]) }, "the sent message")
            try expectContract(sent.state, equals: .sent, "state")
            try expectContract(sent.recipient == nil, "the number is erased once the message is finished")
            try expectContract(sent.countryCallingCode, equals: "49", "the country code is kept")
            try expectContract(sent.lastReply, equals: "HTTP 201 SM1", "last reply")
            try expectContract(sent.attempts, equals: 1, "attempts")
            try expectContract(sent.finishedAt, equals: 112, "finished at")

            // The retry is not due before its time; then it is claimed again with its attempt counted.
            let retrying = try requireContract(try store.read { try $0.smsMessage(id: ids[1]) }, "the retrying message")
            try expectContract(retrying.state, equals: .retrying, "state")
            try expectContract(retrying.attempts, equals: 1, "attempts")
            try expectContract(retrying.recipient, equals: us, "kept while it may still be sent")
            try expectContract(
                try store.write { try $0.claimDue(.sms, owner: "a:0", now: 139, leaseUntil: 300, limit: 5, claimable: claimable) }.isEmpty,
                "not due before 140")
            let again = try store.write { try $0.claimDue(.sms, owner: "a:0", now: 140, leaseUntil: 300, limit: 5, claimable: claimable) }
            try expectContract(again.map(\.id), equals: [ids[1]], "due at 140")
            try expectContract(
                try store.write { try $0.markDead(.sms, id: ids[1], owner: "a:0", now: 141, reply: "HTTP 400 code 21211") }, "dead")
            let dead = try requireContract(try store.read { try $0.smsMessage(id: ids[1]) }, "the dead message")
            try expectContract(dead.state, equals: .dead, "state")
            try expectContract(dead.lastReply, equals: "HTTP 400 code 21211", "last reply")
            try expectContract(dead.recipient == nil, "the number is erased")
            try expectContract(dead.attempts, equals: 1, "a dead outcome counts no attempt (as the outbox's)")

            // An expired lease is claimable by another worker; the old holder can no longer finish it.
            let taken = try store.write { try $0.claimDue(.sms, owner: "c:0", now: 260, leaseUntil: 400, limit: 5, claimable: claimable) }
            try expectContract(taken.map(\.id), equals: [ids[2]], "taken after the lease")
            try expectContract(
                try store.write { try $0.markSent(.sms, id: ids[2], owner: "b:0", now: 261, reply: "late") } == false, "the old holder's")
            try expectContract(try store.write { try $0.markSent(.sms, id: ids[2], owner: "c:0", now: 262, reply: "HTTP 201") }, "the new's")

            // Purge: finished before the horizon only, at most `limit`.
            try expectContract(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 112, limit: 10) }, equals: 0, "before 112")
            try expectContract(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 200, limit: 1) }, equals: 1, "at most 1")
            try expectContract(try store.writeSyncingLater { try $0.purgeFinished(.sms, before: 300, limit: 10) }, equals: 2, "before 300")
            try expectContract(try store.read { try $0.smsMessages(state: nil, limit: 10) }.isEmpty, "all purged")
        },
        StoreContractCase("sms outbox", "a claim keeps its number until settled; a notice is queued from it") { store in
            let de = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
            let kept = try store.write { tx -> Bool in
                try tx.insertPhoneClaim(keptClaim)
                return try tx.keepNumber(de, ofClaim: "k1")
            }
            try expectContract(kept, "kept")
            try expectContract(try !store.write { try $0.keepNumber(de, ofClaim: "nope") }, "no such claim")
            try expectContract(
                try store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "k1"), toNumberOfClaim: "k1", now: 200, giveUpAt: 900) }, "queued")
            let queued = try requireContract(try store.read { try $0.smsMessages(state: nil, limit: 10) }.first, "the notice")
            try expectContract(
                queued.intent == .phoneTransferNotice(claimID: "k1") && queued.recipient == de && queued.countryCallingCode == "49",
                "the notice to the claim's number")
            try expectContract(queued.giveUpAt == 900 && queued.state == .queued, "queued, given up at 900")
            // Settled: the number is erased, and nothing more can be sent to it.
            try store.write { try $0.forgetNumber(ofClaim: "k1") }
            try expectContract(
                try !store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "k1"), toNumberOfClaim: "k1", now: 201, giveUpAt: 900) },
                "nothing more to a settled claim's number")
            try expectContract(
                try !store.write { try $0.enqueueSMS(.phoneTransferNotice(claimID: "none"), toNumberOfClaim: "none", now: 201, giveUpAt: 900) },
                "nothing to no claim")
            try expectContract(try store.read { try $0.smsMessages(state: nil, limit: 10) }.count, equals: 1, "one queued")
        },
        StoreContractCase("sms outbox", "a dead daemon's SMS claims are taken back with its heartbeat") { store in
            let number = try PhoneNumber.parse("+4915112345678", defaultRegion: nil)
            _ = try store.write { tx in
                try (0..<3).map { try tx.enqueueSMS(.test(reference: "t\($0)"), recipient: number, now: 100, giveUpAt: 1000) }
            }
            _ = try store.write { try $0.claimDue(.sms, owner: "box:1:5:sms", now: 100, leaseUntil: 250, limit: 2, claimable: claimable) }
            let dead = DaemonHeartbeat(owner: "box:1:5", host: "box", pid: 1, startedAt: 50, beatAt: 100)
            try store.write { try $0.beat(dead) }
            let reclaimed = try store.write { try $0.reclaimClaims(of: dead, now: 110) }
            try expectContract(reclaimed, equals: ReclaimedClaims(sms: 2, owners: 1), "reclaimed")
            let retaken = try store.write { try $0.claimDue(.sms, owner: "live:0", now: 110, leaseUntil: 300, limit: 5, claimable: claimable) }
            try expectContract(retaken.count, equals: 3, "all three due again")
        },
    ]
}
