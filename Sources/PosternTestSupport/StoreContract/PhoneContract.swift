import Foundation
import PosternCore
import Synchronization

/// Phone claims by id, the one verified holder per number, transfers, re-keying, and phone
/// sign-in requests (one per number, tries counted, single use); the flows' races over them.
enum PhoneContract {
    static func claim(_ id: String, uid: String?, number: UInt8 = 1, now: Int64 = 1_000) -> PhoneClaim {
        PhoneClaim(
            id: id, uid: uid, numberHash: Array(repeating: number, count: 32), countryCode: "49",
            codeHash: Array(repeating: 7, count: 32), createdAt: now, codeExpiresAt: now + 600, expiresAt: now + 600,
            ownerApprovedAt: now, locale: "de")
    }

    static func claim(_ id: String, uid: String, hash: [UInt8]) -> PhoneClaim {
        var claim = claim(id, uid: uid)
        claim.numberHash = hash
        return claim
    }

    static func request(_ id: String, number: UInt8 = 1, now: Int64 = 1_000, locale: String? = "de") -> PhoneSignInCode {
        PhoneSignInCode(
            requestID: id, numberHash: Array(repeating: number, count: 32), countryCode: "49",
            codeHash: Array("code-of-\(id)".utf8), createdAt: now, expiresAt: now + 600, locale: locale)
    }

    /// --phone-sign-in for DE, past the per-number caps (which have their own tests): codes a second apart.
    static func phoneSignIn(_ config: inout AuthConfiguration) {
        config.phoneSignIn = true
        config.sms = SMSConfiguration(countries: ["DE"])
        config.sms.phoneSignIn = true
        config.sms.numberInterval = 0
        config.sms.numberPerHour = 0
    }

    /// Asks for a phone sign-in code for `number`, and returns the code of the SMS it queued.
    static func newestCode(_ h: FlowHarness, _ number: String) throws -> String {
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: nil)
        let queued = try requireContract(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first, "the queued SMS")
        let recipient = try requireContract(queued.recipient, "its recipient")
        return try requireContract(try h.service.smsComposer.composeSMS(queued.intent, recipient: recipient), "the composed SMS").code
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("phones", "claims read back by id and by account; one holding per number; a delete takes the holding with it") { store in
            try store.write { tx in
                try tx.insertAccount(Account(uid: "U", createdAt: 1))
                try tx.insertAccount(Account(uid: "V", createdAt: 1))
                try tx.insertPhoneClaim(claim("a", uid: "U"))
                try tx.insertPhoneClaim(claim("b", uid: "V", now: 1_001))
                try tx.insertPhoneClaim(claim("c", uid: nil, number: 2, now: 1_002))
            }
            try expectContractThrows(StoreError.self) { try store.write { tx in try tx.insertPhoneClaim(claim("a", uid: "U")) } }
            let read = try requireContract(try store.read { try $0.phoneClaim(id: "a") })
            try expectContract(read == claim("a", uid: "U"))
            try expectContract(try store.read { try $0.phoneClaim(id: "c") }?.uid == nil)
            try expectContract(try store.read { try $0.phoneClaims(uid: "U") }.map(\.id) == ["a"])

            // One holder per number: the second holding of the same number is refused, not an error.
            let number = Array(repeating: UInt8(1), count: 32)
            let (first, second) = try store.write { tx in
                (
                    try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: number, uid: "V", claimID: "b", verifiedAt: 1_100)),
                    try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: number, uid: "U", claimID: "a", verifiedAt: 1_100))
                )
            }
            try expectContract(first && !second)
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: number) } == PhoneNumberHolder(numberHash: number, uid: "V", claimID: "b", verifiedAt: 1_100))
            try expectContract(try store.read { try $0.phoneClaim(id: "b") }?.verifiedAt == 1_100)

            // A transfer's state, and the claims waiting on V.
            var waiting = claim("a", uid: "U")
            waiting.holderProvedAt = 1_050
            waiting.transferFrom = "V"
            waiting.transferDueAt = 5_000
            waiting.wrongTries = 2
            let changed = waiting
            try store.write { tx in try tx.updatePhoneClaim(changed) }
            try expectContract(try store.read { try $0.phoneClaim(id: "a") } == waiting)
            try expectContract(try store.read { try $0.phoneTransfers(from: "V") }.map(\.id) == ["a"])
            try expectContractThrows(StoreError.self) { try store.write { tx in try tx.updatePhoneClaim(claim("nope", uid: "U")) } }

            // Deleting the holding claim frees the number.
            try expectContract(try store.write { tx in try tx.deletePhoneClaim(id: "b") })
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: number) } == nil)
            try expectContract(try !store.write { tx in try tx.deletePhoneClaim(id: "b") })

            // Housekeeping forgets unfinished claims past their life, not a transfer's nor a holding's.
            try store.write { tx in
                try tx.insertPhoneClaim(claim("held", uid: "U", number: 3))
                _ = try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: Array(repeating: 3, count: 32), uid: "U", claimID: "held", verifiedAt: 1_100))
            }
            try expectContract(try store.write { tx in try tx.prunePhoneClaims(expiredBy: 10_000, limit: 100) } == 1)  // "c"
            try expectContract(try store.read { try $0.phoneClaim(id: "c") } == nil)
            try expectContract(try store.read { try $0.phoneClaim(id: "a") } != nil)
            try expectContract(try store.read { try $0.phoneClaim(id: "held") } != nil)

            // Deleting an account deletes its claims and holdings.
            try store.write { tx in try tx.deleteAccount(uid: "U") }
            try expectContract(try store.read { try $0.phoneClaims(uid: "U") }.isEmpty)
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: Array(repeating: 3, count: 32)) } == nil)
        },
        StoreContractCase("phones", "the transfers due: waiting claims whose cool-off ended by then, oldest first, at most the limit; none that waits on, none verified") { store in
            @Sendable func transfer(_ id: String, dueAt: Int64?, now: Int64) -> PhoneClaim {
                var claim = claim(id, uid: "U", now: now)
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
                try tx.insertPhoneClaim(claim("plain", uid: "U", number: 2))
            }
            try expectContract(try store.read { try $0.phoneTransfersDue(by: 1_499, limit: 10) }.isEmpty)
            try expectContract(try store.read { try $0.phoneTransfersDue(by: 2_000, limit: 10) }.map(\.id) == ["first", "second"])
            try expectContract(try store.read { try $0.phoneTransfersDue(by: 2_000, limit: 1) }.map(\.id) == ["first"])
            try expectContract(try store.read { try $0.phoneTransfersDue(by: 9_999, limit: 10) }.map(\.id) == ["first", "second", "late"])
        },
        StoreContractCase("phones", "a holding under an old spelling's hash is re-keyed with every claim of that hash; never onto a held number") { store in
            let legacy = Array(repeating: UInt8(3), count: 32), canonical = Array(repeating: UInt8(4), count: 32)
            let legacyTwin = Array(repeating: UInt8(5), count: 32), canonicalTwin = Array(repeating: UInt8(6), count: 32)
            try store.write { tx in
                for uid in ["U", "V", "W"] { try tx.insertAccount(Account(uid: uid, createdAt: 1)) }
                try tx.insertPhoneClaim(claim("held", uid: "U", hash: legacy))
                var waiting = claim("asks", uid: "V", hash: legacy)
                waiting.transferFrom = "U"
                try tx.insertPhoneClaim(waiting)
                try tx.insertPhoneClaim(claim("other", uid: "W", hash: canonicalTwin))
                try tx.insertPhoneClaim(claim("twinOld", uid: "V", hash: legacyTwin))
                try tx.insertPhoneClaim(claim("twinNew", uid: "W", hash: canonicalTwin))
                try expectContract(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: legacy, uid: "U", claimID: "held", verifiedAt: 1_100)))
                try expectContract(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: legacyTwin, uid: "V", claimID: "twinOld", verifiedAt: 1_100)))
                try expectContract(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: canonicalTwin, uid: "W", claimID: "twinNew", verifiedAt: 1_200)))
            }
            try expectContract(try store.write { tx in try tx.rekeyPhoneNumber(from: legacy, to: canonical) })
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: canonical) } == PhoneNumberHolder(numberHash: canonical, uid: "U", claimID: "held", verifiedAt: 1_100))
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: legacy) } == nil)
            let held = try requireContract(try store.read { try $0.phoneClaim(id: "held") })
            try expectContract(held.numberHash == canonical && held.verifiedAt == 1_100)
            try expectContract(try store.read { try $0.phoneClaim(id: "asks") }?.numberHash == canonical)
            try expectContract(try store.read { try $0.phoneTransfers(from: "U") }.map(\.numberHash) == [canonical])
            // Done once: the old hash holds nothing any more.
            try expectContract(try !store.write { tx in try tx.rekeyPhoneNumber(from: legacy, to: canonical) })
            // Held in both spellings: nothing moves, neither holding nor any claim.
            try expectContract(try !store.write { tx in try tx.rekeyPhoneNumber(from: legacyTwin, to: canonicalTwin) })
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: legacyTwin) }?.uid == "V")
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: canonicalTwin) }?.uid == "W")
            try expectContract(try store.read { try $0.phoneClaim(id: "twinOld") }?.numberHash == legacyTwin)
            try expectContract(try store.read { try $0.phoneClaim(id: "other") }?.numberHash == canonicalTwin)
        },
        StoreContractCase("phones", "20 accounts claim one number at once, each proving its code: at most one holds it, the others wait for it") { store in
            let h = try FlowHarness(store) {
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
                let queued = try requireContract(try h.store.read { try $0.smsMessages(state: nil, limit: 1) }.first)
                let recipient = try requireContract(queued.recipient)
                let code = try requireContract(try h.service.smsComposer.composeSMS(queued.intent, recipient: recipient)).code
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
            try expectContract(failures.withLock { $0 } == [])
            try expectContract(proved.value == 20)
            let statuses = try parties.map { try h.service.phoneOwner.list(idToken: $0.idToken).map(\.status) }
            try expectContract(statuses.filter { $0 == [.verified] }.count == 1)
            try expectContract(statuses.filter { $0 == [.awaitingTransfer] }.count == 19)
            let holders = try h.store.read { tx in try all.compactMap { try tx.phoneClaim(id: $0.claimID)?.verifiedAt } }
            try expectContract(holders.count == 1)
        },
        StoreContractCase("phoneSignIns", "read back by request id; a newer request of the number replaces the older; tries stop at the limit; single use; pruned at expiry") { store in
            let number = Array(repeating: UInt8(1), count: 32)
            try store.write { tx in
                try tx.putPhoneSignIn(request("r1"))
                try tx.putPhoneSignIn(request("other", number: 2, locale: nil))
            }
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "r1") } == request("r1"))
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "other") }?.locale == nil)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "nope") } == nil)

            // Two tries, then a newer request: the older is gone and the tries start again.
            try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.tries == 1)
            try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.tries == 2)
            try store.write { tx in try tx.putPhoneSignIn(request("r2", now: 1_100)) }
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "r1") } == nil)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "r2") } == request("r2", now: 1_100))

            // The limit: five tries are counted, the sixth is refused and counts nothing.
            for expected in 1...5 {
                try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) }?.requestID == "r2")
                try expectContract(try store.read { try $0.phoneSignIn(requestID: "r2") }?.tries == expected)
            }
            try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) } == nil)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "r2") }?.tries == 5)
            try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: Array(repeating: 9, count: 32), maximumTries: 5) } == nil)
            // A try rolled back with its transaction is not counted.
            struct Rollback: Error {}
            try expectContractThrows(Rollback.self) {
                try store.write { tx in
                    _ = try tx.takePhoneSignInTry(numberHash: Array(repeating: 2, count: 32), maximumTries: 5)
                    throw Rollback()
                }
            }
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "other") }?.tries == 0)

            // Single use: one delete gets true.
            try expectContract(try store.write { tx in try tx.deletePhoneSignIn(requestID: "r2") })
            try expectContract(try !store.write { tx in try tx.deletePhoneSignIn(requestID: "r2") })
            try expectContract(try store.write { tx in try tx.takePhoneSignInTry(numberHash: number, maximumTries: 5) } == nil)

            // Housekeeping: at or before the horizon goes, after it stays.
            try store.write { tx in try tx.putPhoneSignIn(request("late", number: 3, now: 2_000)) }
            try expectContract(try store.write { tx in try tx.prunePhoneSignIns(expiredBy: 1_600, limit: 100) } == 1)  // "other" (expires 1600)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "other") } == nil)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "late") } != nil)
            // Nothing of the number in the clear: the row holds its keyed hash and country code only.
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "late") }?.countryCode == "49")
        },
        StoreContractCase("phoneSignIns", "20 concurrent tries of one request with a limit of 5: exactly 5 are counted") { store in
            try store.write { tx in try tx.putPhoneSignIn(request("r")) }
            let taken = Counter()
            onThreads(20) { _ in
                if (try? store.write({ tx in try tx.takePhoneSignInTry(numberHash: Array(repeating: 1, count: 32), maximumTries: 5) })) != nil {
                    taken.increment()
                }
            }
            try expectContract(taken.value == 5)
            try expectContract(try store.read { try $0.phoneSignIn(requestID: "r") }?.tries == 5)
        },
        StoreContractCase("phoneSignIns", "20 concurrent completes of one code on a free number: one sign-in, one account, one holder") { store in
            let h = try FlowHarness(store, configure: phoneSignIn)
            let number = "+4915112345678"
            let code = try newestCode(h, number)
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
            try expectContract(won.count == 1)
            try expectContract(failures.withLock { $0 } == Array(repeating: "INVALID_PHONE_CODE", count: 19))
            let uid = try requireContract(won.first)
            // Exactly one account holds the number; the next code signs in to it.
            let nextCode = try newestCode(h, number)
            let again = try h.service.phoneSignIn.complete(phoneNumber: number, code: nextCode, idToken: nil, allowMigration: nil)
            try expectContract(again.uid == uid && !again.isNewUser)
            try expectContract(try h.store.read { try $0.phoneClaims(uid: uid) }.count == 1)
        },
        StoreContractCase("phoneSignIns", "20 devices at once each ask for a code for one free number and complete with the newest: never two accounts") { store in
            let h = try FlowHarness(store, configure: phoneSignIn)
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
            try expectContract(won.count <= 1, "never two accounts for one number: \(won)")
            // A superseded code typed is a wrong guess at the newer one: past 5 the number's guessing
            // budget locks it (TOO_MANY_ATTEMPTS_TRY_LATER), as it would for an attacker.
            let expected: Set<String> = ["INVALID_PHONE_CODE", "TOO_MANY_ATTEMPTS_TRY_LATER", "superseded before it was read"]
            try expectContract(refusals.withLock { $0 }.allSatisfy { expected.contains($0) }, "\(refusals.withLock { $0 })")
            // Afterwards (past any lock) a clean sign-in lands on the one account (the winner's, if there was one).
            h.clock.advance(by: TimeInterval(GuessBudget().cap))
            let code = try newestCode(h, number)
            let login = try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: nil, allowMigration: nil)
            if let winner = won.first { try expectContract(login.uid == winner && !login.isNewUser) }
            let hashes = try h.store.read { tx in try tx.phoneClaims(uid: login.uid).map(\.numberHash) }
            try expectContract(hashes.count == 1)
            try expectContract(try h.store.read { try $0.phoneNumberHolder(numberHash: hashes[0]) }?.uid == login.uid)
        },
        StoreContractCase("phones", "a claim that holds a number holds no second one (false); a holding of no claim is refused") { store in
            try store.write { tx in
                try tx.insertAccount(Account(uid: "U", createdAt: 1))
                try tx.insertPhoneClaim(claim("a", uid: "U"))
            }
            let first = PhoneNumberHolder(numberHash: Array(repeating: 1, count: 32), uid: "U", claimID: "a", verifiedAt: 1_100)
            let second = PhoneNumberHolder(numberHash: Array(repeating: 2, count: 32), uid: "U", claimID: "a", verifiedAt: 1_100)
            try expectContract(try store.write { try $0.holdPhoneNumber(first) }, "the first holding")
            try expectContract(try store.write { try $0.holdPhoneNumber(second) } == false, "a second number for the claim")
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: second.numberHash) } == nil, "the second number unheld")
            let orphan = PhoneNumberHolder(numberHash: Array(repeating: 3, count: 32), uid: "U", claimID: "nope", verifiedAt: 1_100)
            try expectContractThrows((any Error).self, "a holding of no claim") { _ = try store.write { try $0.holdPhoneNumber(orphan) } }
            try expectContract(try store.read { try $0.phoneNumberHolder(numberHash: orphan.numberHash) } == nil, "nothing held")
        },
        StoreContractCase("phones", "a claim of an account that does not exist is refused") { store in
            try expectContractThrows((any Error).self, "a claim of nobody") { try store.write { try $0.insertPhoneClaim(claim("a", uid: "ghost")) } }
            try expectContract(try store.read { try $0.phoneClaim(id: "a") } == nil, "nothing stored")
        },
    ]
}
