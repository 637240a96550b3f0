import Foundation
import PosternCore
import PosternCrypto
import PosternStore
import PosternTestSupport
import Synchronization
import Testing

/// Phone sign-in requests (`phone_sign_ins`, `--phone-sign-in`) on SQLite and PostgreSQL: one per
/// number, the tries counted under the row's lock, single use, and the flow's race.
@Suite("Phone sign-in requests in the store, on each store")
struct PhoneSignInStoreTests {
    static func request(_ id: String, number: UInt8 = 1, now: Int64 = 1_000, locale: String? = "de") -> PhoneSignInCode {
        PhoneSignInCode(
            requestID: id, numberHash: Array(repeating: number, count: 32), countryCode: "49",
            codeHash: Array("code-of-\(id)".utf8), createdAt: now, expiresAt: now + 600, locale: locale)
    }

    @Test("read back by request id; a newer request of the number replaces the older; tries stop at the limit; single use; pruned at expiry", arguments: StoreKind.available)
    func roundTrip(kind: StoreKind) throws {
        let store = try kind.database().open()
        let number = Array(repeating: UInt8(1), count: 32)
        try store.write { tx in
            try tx.putPhoneSignIn(Self.request("r1"))
            try tx.putPhoneSignIn(Self.request("other", number: 2, locale: nil))
        }
        #expect(try store.read { try $0.phoneSignIn(requestID: "r1") } == Self.request("r1"))
        #expect(try store.read { try $0.phoneSignIn(requestID: "other") }?.locale == nil)
        #expect(try store.read { try $0.phoneSignIn(requestID: "nope") } == nil)

        // Two tries, then a newer request: the older is gone and the tries start again.
        #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.tries == 1)
        #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.tries == 2)
        try store.write { tx in try tx.putPhoneSignIn(Self.request("r2", now: 1_100)) }
        #expect(try store.read { try $0.phoneSignIn(requestID: "r1") } == nil)
        #expect(try store.read { try $0.phoneSignIn(requestID: "r2") } == Self.request("r2", now: 1_100))

        // The limit: five tries are counted, the sixth is refused and counts nothing.
        for expected in 1...5 {
            #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.requestID == "r2")
            #expect(try store.read { try $0.phoneSignIn(requestID: "r2") }?.tries == expected)
        }
        #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) } == nil)
        #expect(try store.read { try $0.phoneSignIn(requestID: "r2") }?.tries == 5)
        #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: Array(repeating: 9, count: 32), maximumTries: 5) } == nil)
        // A try rolled back with its transaction is not counted.
        struct Rollback: Error {}
        #expect(throws: Rollback.self) {
            try store.write { tx in
                _ = try tx.takePhoneSignInTry(numberHash: Array(repeating: 2, count: 32), maximumTries: 5)
                throw Rollback()
            }
        }
        #expect(try store.read { try $0.phoneSignIn(requestID: "other") }?.tries == 0)

        // Single use: one delete gets true.
        #expect(try store.write { tx in try tx.deletePhoneSignIn(requestID: "r2") })
        #expect(try !store.write { tx in try tx.deletePhoneSignIn(requestID: "r2") })
        #expect(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) } == nil)

        // Housekeeping: at or before the horizon goes, after it stays.
        try store.write { tx in try tx.putPhoneSignIn(Self.request("late", number: 3, now: 2_000)) }
        #expect(try store.write { tx in try tx.prunePhoneSignIns(expiredBy: 1_600, limit: 100) } == 1)  // "other" (expires 1600)
        #expect(try store.read { try $0.phoneSignIn(requestID: "other") } == nil)
        #expect(try store.read { try $0.phoneSignIn(requestID: "late") } != nil)
        // Nothing of the number in the clear: the row holds its keyed hash and country code only.
        #expect(try store.read { try $0.phoneSignIn(requestID: "late") }?.countryCode == "49")
    }

    @Test("20 concurrent tries of one request with a limit of 5: exactly 5 are counted", arguments: StoreKind.available)
    func concurrentTries(kind: StoreKind) throws {
        let store = try kind.database().open()
        try store.write { tx in try tx.putPhoneSignIn(Self.request("r")) }
        let taken = Counter()
        onThreads(20) { _ in
            if (try? store.write({ tx in try tx.takePhoneSignInTry(numberHash: Array(repeating: 1, count: 32), maximumTries: 5) })) != nil {
                taken.increment()
            }
        }
        #expect(taken.value == 5)
        #expect(try store.read { try $0.phoneSignIn(requestID: "r") }?.tries == 5)
    }

    @Test("20 concurrent completes of one code on a free number: one sign-in, one account, one holder", arguments: StoreKind.available)
    func concurrentCompletes(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind) {
            $0.phoneSignIn = true
            $0.sms = SMSConfiguration(countries: ["DE"])
            $0.sms.phoneSignIn = true
            // The second code a second later: past the per-number caps, which have their own tests.
            $0.sms.numberInterval = 0
            $0.sms.numberPerHour = 0
        }
        let number = "+4915112345678"
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: nil)
        let queued = try #require(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first)
        let recipient = try #require(queued.recipient)
        let code = try #require(try h.service.smsComposer.composeSMS(queued.intent, recipient: recipient)).code
        let uids = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        onThreads(20) { _ in
            do {
                let login = try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: nil, allowMigration: nil)
                uids.withLock { $0.append(login.uid) }
            } catch let error as AuthError {
                failures.withLock { $0.append(error.code) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        let won = uids.withLock { $0 }
        #expect(won.count == 1)
        #expect(failures.withLock { $0 } == Array(repeating: "INVALID_PHONE_CODE", count: 19))
        let uid = try #require(won.first)
        // Exactly one account holds the number; the next code signs in to it.
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: nil)
        let next = try #require(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first)
        let nextRecipient = try #require(next.recipient)
        let nextCode = try #require(try h.service.smsComposer.composeSMS(next.intent, recipient: nextRecipient)).code
        let again = try h.service.phoneSignIn.complete(phoneNumber: number, code: nextCode, idToken: nil, allowMigration: nil)
        #expect(again.uid == uid && !again.isNewUser)
        #expect(try h.store.read { try $0.phoneClaims(uid: uid) }.count == 1)
    }

    @Test("20 devices at once each ask for a code for one free number and complete with the newest: never two accounts", arguments: StoreKind.available)
    func concurrentSeparateCodes(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind) {
            $0.phoneSignIn = true
            $0.sms = SMSConfiguration(countries: ["DE"])
            $0.sms.phoneSignIn = true
            $0.sms.numberInterval = 0
            $0.sms.numberPerHour = 0
        }
        let number = "+4915112345679"
        let parsed = try PhoneNumber.parse(number, defaultRegion: nil)
        let uids = Mutex<[String]>([])
        let refusals = Mutex<[String]>([])
        onThreads(20) { _ in
            do {
                try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: nil)
                // The code of the number's live request as this device sees it (only that one
                // composes); another device may supersede it before it is typed: then it is a
                // wrong try against the newer one, as it would be for a person.
                let queued = try h.store.read { try $0.smsMessages(state: nil, limit: 50) }
                guard let code = try queued.lazy.compactMap({ try h.service.smsComposer.composeSMS($0.intent, recipient: parsed)?.code }).first else {
                    refusals.withLock { $0.append("superseded before it was read") }
                    return
                }
                let login = try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: nil, allowMigration: nil)
                uids.withLock { $0.append(login.uid) }
            } catch let error as AuthError {
                refusals.withLock { $0.append(error.code) }
            } catch {
                refusals.withLock { $0.append("\(error)") }
            }
        }
        let won = Set(uids.withLock { $0 })
        #expect(won.count <= 1, "never two accounts for one number: \(won)")
        // A superseded code typed is a wrong guess at the newer one: past 5 the number's guessing
        // budget locks it (TOO_MANY_ATTEMPTS_TRY_LATER), as it would for an attacker.
        let expected: Set<String> = ["INVALID_PHONE_CODE", "TOO_MANY_ATTEMPTS_TRY_LATER", "superseded before it was read"]
        #expect(refusals.withLock { $0 }.allSatisfy { expected.contains($0) }, "\(refusals.withLock { $0 })")
        // Afterwards (past any lock) a clean sign-in lands on the one account (the winner's, if there was one).
        h.clock.advance(by: TimeInterval(GuessBudget().cap))
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: nil)
        let last = try #require(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first)
        let code = try #require(try h.service.smsComposer.composeSMS(last.intent, recipient: parsed)).code
        let login = try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: nil, allowMigration: nil)
        if let winner = won.first { #expect(login.uid == winner && !login.isNewUser) }
        let hashes = try h.store.read { tx in try tx.phoneClaims(uid: login.uid).map(\.numberHash) }
        #expect(hashes.count == 1)
        #expect(try h.store.read { try $0.phoneNumberHolder(numberHash: hashes[0]) }?.uid == login.uid)
    }
}
