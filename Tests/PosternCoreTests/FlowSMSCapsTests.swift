import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The SMS caps as a stranger meets them through the flows: the number's own cool-off and hourly
/// cap say nothing about the number (they answer as an accepted send, and simply send nothing).
@Suite("SMS caps through the flows: no oracle on a number")
struct FlowSMSCapsTests {
    static let number = "+4915112345678"

    static func harness(_ configure: (inout AuthConfiguration) -> Void = { _ in }) throws -> FlowHarness {
        try FlowHarness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
            $0.sms.numberInterval = 60
            $0.sms.numberPerHour = 5
            configure(&$0)
        }
    }

    @Test("attacker: a send to a number texted 3 s ago answers as an accepted send (no 429, no Retry-After); nothing is sent again, and the code already sent still signs in")
    func cooldownAnswersAsAccepted() throws {
        let h = try Self.harness()
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
        let first = try h.lastSMSCode()
        h.clock.advance(by: 3)
        // A stranger from another IP: the same answer as for a number nobody texted.
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: "198.51.100.9")
        try h.service.phoneSignIn.send(phoneNumber: "+4915100000001", locale: nil, idToken: nil, clientIP: "198.51.100.9")
        #expect(h.store.snapshot().sms.count == 2, "the cool-off sent nothing again")
        #expect(h.service.smsMetrics.capSnapshot().first { $0.cap == "number_cooldown" }?.count == 1)
        // The silenced request superseded nothing: the code the owner has still signs in.
        #expect(try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: first, idToken: nil, allowMigration: nil).isNewUser)
    }

    @Test("attacker: past the number's hourly cap the answer is an accepted send too; a claim still gets its id and its status")
    func hourlyCapAnswersAsAccepted() throws {
        let h = try Self.harness { $0.sms.numberInterval = 0 }
        for _ in 0..<5 { try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil) }
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        #expect(h.store.snapshot().sms.count == 5)
        let owner = try h.signIn("u@example.com")
        let silenced = try h.service.phoneOwner.add(idToken: owner.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        let other = try h.service.phoneOwner.add(idToken: owner.session.idToken, phoneNumber: "+4915100000002", locale: nil, clientIP: nil)
        #expect(silenced.status == other.status && silenced.expiresAt == other.expiresAt && silenced.ownerApproved == other.ownerApproved)
        #expect(silenced.claimID != other.claimID && silenced.claimID.count == other.claimID.count)
        #expect(h.store.snapshot().sms.count == 6, "only the free number's SMS")
        #expect(h.service.smsMetrics.capSnapshot().first { $0.cap == "number_hourly" }?.count == 2)
    }

    @Test("attacker: with phone sign-in off, an anonymous session (one POST /v1/accounts/anonymous) buys no SMS: a holder's claim and an owner's add are refused, nothing is queued; a proved address or a phone still may")
    func anonymousSessionSendsNoSMS() throws {
        let h = try FlowHarness()
        _ = try h.signIn("u@example.com")
        let anonymous = try h.service.sessions.signInAnonymously()
        expectAuthError("ANONYMOUS_ACCOUNT") {
            _ = try h.service.phoneHolder.start(idToken: anonymous.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        }
        expectAuthError("ANONYMOUS_ACCOUNT") {
            _ = try h.service.phoneOwner.add(idToken: anonymous.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        }
        #expect(h.store.snapshot().sms.isEmpty && h.store.snapshot().phoneClaims.isEmpty)
        #expect(h.service.smsMetrics.capSnapshot().first { $0.cap == "unproved_account" }?.count == 2)
        // A signed-in account with a proved address may write a holder's claim.
        let holder = try h.signIn("holder@example.com")
        _ = try h.service.phoneHolder.start(idToken: holder.session.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        #expect(h.store.snapshot().sms.count == 1)
    }
}
