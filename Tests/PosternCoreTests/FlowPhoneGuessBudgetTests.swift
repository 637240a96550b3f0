import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The guessing budget per number (the address's ``GuessBudget``, keyed by a keyed hash of the
/// number): counted across phone sign-in codes and claim codes, on both sides of a claim, the same
/// for numbers with and without an account, and not reset by a new code. The caps are off here
/// (the harness's default), as the attacker had them.
@Suite("Phone codes: one guessing budget per number, that no new code resets")
struct FlowPhoneGuessBudgetTests {
    static let number = "+4915112345678"

    static func harness() throws -> FlowHarness {
        try FlowHarness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
        }
    }

    static func wrong(_ code: String) -> String { String(format: "%06d", ((Int(code) ?? 0) + 1) % 1_000_000) }

    /// The error codes of `body`'s refusals, in order ("OK" when it did not throw).
    static func answer(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "OK"
        } catch let error as AuthError {
            return error.code
        } catch {
            return "\(error)"
        }
    }

    @Test("attacker: 200 wrong sign-in guesses over 40 codes, then the right code: 5 are counted, the rest and the right code are refused until the lock ends", arguments: [false, true])
    func signInGuessesAcrossCodes(held: Bool) throws {
        let h = try Self.harness()
        if held {
            // A phone-only account holds the number; the budget is the same as for a free one.
            try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
            _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
        }
        var answers: [String] = []
        var code = ""
        for _ in 0..<40 {
            try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
            code = try h.lastSMSCode()
            for _ in 0..<5 {
                answers.append(Self.answer {
                    _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: Self.wrong(code), idToken: nil, allowMigration: nil)
                })
            }
        }
        #expect(answers.prefix(5).allSatisfy { $0 == "INVALID_PHONE_CODE" })
        #expect(answers.dropFirst(5).allSatisfy { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }, "\(Set(answers.dropFirst(5)))")
        // The right code during the lock is refused too, and consumes nothing.
        let locked = expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: code, idToken: nil, allowMigration: nil)
        }
        #expect(locked?.details["retryAfter"] == "30")
        // The guesses into the lock were not counted: 30 s later the owner's code signs in.
        h.clock.advance(by: 30)
        let login = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: code, idToken: nil, allowMigration: nil)
        #expect(login.isNewUser == !held)
        // ... which cleared the budget: 5 free failures again.
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        let next = try h.lastSMSCode()
        for _ in 0..<5 {
            expectAuthError("INVALID_PHONE_CODE") {
                _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: Self.wrong(next), idToken: nil, allowMigration: nil)
            }
        }
    }

    @Test("attacker: 100 wrong claim codes over 20 claims of one number, then the right one: 5 are counted, the right one is refused during the lock", arguments: [false, true])
    func claimGuessesAcrossClaims(held: Bool) throws {
        let h = try Self.harness()
        if held {
            let victim = try h.signIn("v@example.com")
            let claim = try h.service.phoneOwner.add(idToken: victim.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
            _ = try h.service.phoneOwner.prove(idToken: victim.session.idToken, claimID: claim.claimID, code: try h.lastSMSCode())
        }
        let attacker = try h.signIn("a@example.com")
        var answers: [String] = []
        var last: (id: String, code: String) = ("", "")
        for round in 0..<20 {
            let claim = try h.service.phoneOwner.add(idToken: attacker.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
            last = (claim.claimID, try h.lastSMSCode())
            for guess in 0..<5 {
                // Both sides of a claim count: the owner's session and the holder's page.
                answers.append(Self.answer {
                    if (round + guess) % 2 == 0 {
                        _ = try h.service.phoneOwner.prove(idToken: attacker.session.idToken, claimID: last.id, code: Self.wrong(last.code))
                    } else {
                        _ = try h.service.phoneHolder.prove(claimID: last.id, code: Self.wrong(last.code))
                    }
                })
            }
        }
        #expect(answers.prefix(5).allSatisfy { $0 == "INVALID_PHONE_CODE" })
        #expect(answers.dropFirst(5).allSatisfy { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }, "\(Set(answers.dropFirst(5)))")
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.phoneOwner.prove(idToken: attacker.session.idToken, claimID: last.id, code: last.code)
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { _ = try h.service.phoneHolder.read(claimID: last.id, code: last.code) }
        h.clock.advance(by: 30)
        _ = try h.service.phoneHolder.prove(claimID: last.id, code: last.code)
    }

    @Test("one budget for sign-in and claim codes: wrong sign-in codes lock the number's claims, and wrong claim codes its sign-in")
    func oneBudgetForBoth() throws {
        let h = try Self.harness()
        let owner = try h.signIn("u@example.com")
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        let signInCode = try h.lastSMSCode()
        for _ in 0..<3 {
            expectAuthError("INVALID_PHONE_CODE") {
                _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: Self.wrong(signInCode), idToken: nil, allowMigration: nil)
            }
        }
        let claim = try h.service.phoneOwner.add(idToken: owner.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        let claimCode = try h.lastSMSCode()
        for _ in 0..<2 {
            expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: claim.claimID, code: Self.wrong(claimCode)) }
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: signInCode, idToken: nil, allowMigration: nil)
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { try h.service.phoneHolder.delete(claimID: claim.claimID, code: claimCode) }
        // Another number is not touched.
        try h.service.phoneSignIn.send(phoneNumber: "+4915100000001", locale: nil, idToken: nil, clientIP: nil)
        _ = try h.service.phoneSignIn.complete(phoneNumber: "+4915100000001", code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
        // The budget's row holds neither the number nor its keyed hash as the claims have it.
        let buckets = h.store.snapshot().guesses.keys
        #expect(buckets.count == 1)
        let stored = try #require(buckets.first)
        #expect(!String(decoding: stored, as: UTF8.self).contains("15112345678"))
        #expect(!h.store.snapshot().phoneClaims.values.contains { $0.numberHash.starts(with: stored) })
    }
}
