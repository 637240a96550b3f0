import Foundation
import PosternCore
import PosternCrypto
import PosternStore
import PosternTestSupport
import Synchronization
import Testing

/// The phone tables on SQLite and PostgreSQL: claims by id, the one holder per number, and the
/// flows' races.
@Suite("Phone claims in the store, on each store")
struct PhoneStoreTests {
    static func claim(_ id: String, uid: String?, number: UInt8 = 1, now: Int64 = 1_000) -> PhoneClaim {
        PhoneClaim(
            id: id, uid: uid, numberHash: Array(repeating: number, count: 32), countryCode: "49",
            codeHash: Array(repeating: 7, count: 32), createdAt: now, codeExpiresAt: now + 600, expiresAt: now + 600,
            ownerApprovedAt: now, locale: "de")
    }

    @Test("claims read back by id and by account; one holding per number; a delete takes the holding with it", arguments: StoreKind.available)
    func roundTrip(kind: StoreKind) throws {
        let store = try kind.database().open()
        try store.write { tx in
            try tx.insertAccount(Account(uid: "U", createdAt: 1))
            try tx.insertAccount(Account(uid: "V", createdAt: 1))
            try tx.insertPhoneClaim(Self.claim("a", uid: "U"))
            try tx.insertPhoneClaim(Self.claim("b", uid: "V", now: 1_001))
            try tx.insertPhoneClaim(Self.claim("c", uid: nil, number: 2, now: 1_002))
        }
        #expect(throws: StoreError.self) { try store.write { tx in try tx.insertPhoneClaim(Self.claim("a", uid: "U")) } }
        let read = try #require(try store.read { try $0.phoneClaim(id: "a") })
        #expect(read == Self.claim("a", uid: "U"))
        #expect(try store.read { try $0.phoneClaim(id: "c") }?.uid == nil)
        #expect(try store.read { try $0.phoneClaims(uid: "U") }.map(\.id) == ["a"])

        // One holder per number: the second holding of the same number is refused, not an error.
        let number = Array(repeating: UInt8(1), count: 32)
        let (first, second) = try store.write { tx in
            (
                try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: number, uid: "V", claimID: "b", verifiedAt: 1_100)),
                try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: number, uid: "U", claimID: "a", verifiedAt: 1_100))
            )
        }
        #expect(first && !second)
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: number) } == PhoneNumberHolder(numberHash: number, uid: "V", claimID: "b", verifiedAt: 1_100))
        #expect(try store.read { try $0.phoneClaim(id: "b") }?.verifiedAt == 1_100)

        // A transfer's state, and the claims waiting on V.
        var waiting = Self.claim("a", uid: "U")
        waiting.holderProvedAt = 1_050
        waiting.transferFrom = "V"
        waiting.transferDueAt = 5_000
        waiting.wrongTries = 2
        let changed = waiting
        try store.write { tx in try tx.updatePhoneClaim(changed) }
        #expect(try store.read { try $0.phoneClaim(id: "a") } == waiting)
        #expect(try store.read { try $0.phoneTransfers(from: "V") }.map(\.id) == ["a"])
        #expect(throws: StoreError.self) { try store.write { tx in try tx.updatePhoneClaim(Self.claim("nope", uid: "U")) } }

        // Deleting the holding claim frees the number.
        #expect(try store.write { tx in try tx.deletePhoneClaim(id: "b") })
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: number) } == nil)
        #expect(try !store.write { tx in try tx.deletePhoneClaim(id: "b") })

        // Housekeeping forgets unfinished claims past their life, not a transfer's nor a holding's.
        try store.write { tx in
            try tx.insertPhoneClaim(Self.claim("held", uid: "U", number: 3))
            _ = try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: Array(repeating: 3, count: 32), uid: "U", claimID: "held", verifiedAt: 1_100))
        }
        #expect(try store.write { tx in try tx.prunePhoneClaims(expiredBy: 10_000, limit: 100) } == 1)  // "c"
        #expect(try store.read { try $0.phoneClaim(id: "c") } == nil)
        #expect(try store.read { try $0.phoneClaim(id: "a") } != nil)
        #expect(try store.read { try $0.phoneClaim(id: "held") } != nil)

        // Deleting an account deletes its claims and holdings.
        try store.write { tx in try tx.deleteAccount(uid: "U") }
        #expect(try store.read { try $0.phoneClaims(uid: "U") }.isEmpty)
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: Array(repeating: 3, count: 32)) } == nil)
    }

    @Test("the transfers due: waiting claims whose cool-off ended by then, oldest first, at most the limit; none that waits on, none verified", arguments: StoreKind.available)
    func transfersDue(kind: StoreKind) throws {
        let store = try kind.database().open()
        @Sendable func transfer(_ id: String, dueAt: Int64?, now: Int64) -> PhoneClaim {
            var claim = Self.claim(id, uid: "U", now: now)
            claim.holderProvedAt = now
            claim.transferFrom = "V"
            claim.transferDueAt = dueAt
            return claim
        }
        try store.write { tx in
            try tx.insertAccount(Account(uid: "U", createdAt: 1))
            try tx.insertAccount(Account(uid: "V", createdAt: 1))
            try tx.insertPhoneClaim(transfer("late", dueAt: 5_000, now: 1_003))
            try tx.insertPhoneClaim(transfer("second", dueAt: 2_000, now: 1_002))
            try tx.insertPhoneClaim(transfer("first", dueAt: 1_500, now: 1_001))
            try tx.insertPhoneClaim(Self.claim("plain", uid: "U", number: 2))
        }
        #expect(try store.read { try $0.phoneTransfersDue(by: 1_499, limit: 10) }.isEmpty)
        #expect(try store.read { try $0.phoneTransfersDue(by: 2_000, limit: 10) }.map(\.id) == ["first", "second"])
        #expect(try store.read { try $0.phoneTransfersDue(by: 2_000, limit: 1) }.map(\.id) == ["first"])
        #expect(try store.read { try $0.phoneTransfersDue(by: 9_999, limit: 10) }.map(\.id) == ["first", "second", "late"])
    }

    @Test("20 accounts claim one number at once, each proving its code: at most one holds it, the others wait for it", arguments: StoreKind.available)
    func concurrentClaims(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind) {
            $0.sms = SMSConfiguration(countries: ["DE"])
            // 20 SMS to one number in a minute: past the per-number caps, which have their own tests.
            $0.sms.numberInterval = 0
            $0.sms.numberPerHour = 0
        }
        var parties: [(idToken: String, claimID: String, code: String)] = []
        for index in 0..<20 {
            try h.service.emailLink.send(EmailLinkRequest(email: "racer\(index)@example.com"))
            let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
            let claim = try h.service.phoneOwner.add(idToken: login.session.idToken, phoneNumber: "+4915112345678", locale: nil, clientIP: nil)
            let queued = try #require(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first)
            let recipient = try #require(queued.recipient)
            let code = try #require(try h.service.smsComposer.composeSMS(queued.intent, recipient: recipient)).code
            parties.append((login.session.idToken, claim.claimID, code))
        }
        let proved = Counter()
        let failures = Mutex<[String]>([])
        let all = parties
        onThreads(20) { index in
            do {
                _ = try h.service.phoneOwner.prove(idToken: all[index].idToken, claimID: all[index].claimID, code: all[index].code)
                proved.increment()
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(proved.value == 20)
        let statuses = try parties.map { try h.service.phoneOwner.list(idToken: $0.idToken).map(\.status) }
        #expect(statuses.filter { $0 == [.verified] }.count == 1)
        #expect(statuses.filter { $0 == [.awaitingTransfer] }.count == 19)
        let holders = try h.store.read { tx in try all.compactMap { try tx.phoneClaim(id: $0.claimID)?.verifiedAt } }
        #expect(holders.count == 1)
    }

    @Test("a holding under an old spelling's hash is re-keyed with every claim of that hash; never onto a held number", arguments: StoreKind.available)
    func rekeyLegacyHolding(kind: StoreKind) throws {
        try Self.checkRekey(try kind.database().open())
    }

    @Test("the in-memory store re-keys as the SQL stores do")
    func rekeyLegacyHoldingInMemory() throws {
        try Self.checkRekey(InMemoryStore())
    }

    static func claim(_ id: String, uid: String, hash: [UInt8]) -> PhoneClaim {
        var claim = Self.claim(id, uid: uid)
        claim.numberHash = hash
        return claim
    }

    /// U holds the number under its old spelling's hash (`legacy`), V's claim waits for it; then
    /// the number in both spellings, held by V (old) and W (canonical).
    static func checkRekey(_ store: any Store) throws {
        let legacy = Array(repeating: UInt8(3), count: 32), canonical = Array(repeating: UInt8(4), count: 32)
        let legacyTwin = Array(repeating: UInt8(5), count: 32), canonicalTwin = Array(repeating: UInt8(6), count: 32)
        try store.write { tx in
            for uid in ["U", "V", "W"] { try tx.insertAccount(Account(uid: uid, createdAt: 1)) }
            try tx.insertPhoneClaim(Self.claim("held", uid: "U", hash: legacy))
            var waiting = Self.claim("asks", uid: "V", hash: legacy)
            waiting.transferFrom = "U"
            try tx.insertPhoneClaim(waiting)
            try tx.insertPhoneClaim(Self.claim("other", uid: "W", hash: canonicalTwin))
            try tx.insertPhoneClaim(Self.claim("twinOld", uid: "V", hash: legacyTwin))
            try tx.insertPhoneClaim(Self.claim("twinNew", uid: "W", hash: canonicalTwin))
            #expect(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: legacy, uid: "U", claimID: "held", verifiedAt: 1_100)))
            #expect(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: legacyTwin, uid: "V", claimID: "twinOld", verifiedAt: 1_100)))
            #expect(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: canonicalTwin, uid: "W", claimID: "twinNew", verifiedAt: 1_200)))
        }
        #expect(try store.write { tx in try tx.rekeyPhoneNumber(from: legacy, to: canonical) })
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: canonical) } == PhoneNumberHolder(numberHash: canonical, uid: "U", claimID: "held", verifiedAt: 1_100))
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: legacy) } == nil)
        let held = try #require(try store.read { try $0.phoneClaim(id: "held") })
        #expect(held.numberHash == canonical && held.verifiedAt == 1_100)
        #expect(try store.read { try $0.phoneClaim(id: "asks") }?.numberHash == canonical)
        #expect(try store.read { try $0.phoneTransfers(from: "U") }.map(\.numberHash) == [canonical])
        // Done once: the old hash holds nothing any more.
        #expect(try !store.write { tx in try tx.rekeyPhoneNumber(from: legacy, to: canonical) })
        // Held in both spellings: nothing moves, neither holding nor any claim.
        #expect(try !store.write { tx in try tx.rekeyPhoneNumber(from: legacyTwin, to: canonicalTwin) })
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: legacyTwin) }?.uid == "V")
        #expect(try store.read { try $0.phoneNumberHolder(numberHash: canonicalTwin) }?.uid == "W")
        #expect(try store.read { try $0.phoneClaim(id: "twinOld") }?.numberHash == legacyTwin)
        #expect(try store.read { try $0.phoneClaim(id: "other") }?.numberHash == canonicalTwin)
    }
}
