import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// "Approve on your other device" in the flows, over the in-memory store: the request's life,
/// the page's two steps, the waiting device's secret, and the attacks on each.
@Suite("approve on your other device")
struct FlowApprovalTests {
    /// An approval request for `email`: its verifier, the number, and the link's oobCode.
    func ask(_ h: FlowHarness, _ email: String, device: String = "Chrome on Linux") throws -> (verifier: String, number: Int, oobCode: String) {
        let verifier = "approval-verifier-" + Base64URL.encode(try SecureRandom.bytes(24))
        let number = try #require(try h.service.emailLink.send(EmailLinkRequest(
            email: email, codeChallenge: Base64URL.encode(SHA256.hash(verifier)), approvalDevice: device)))
        let link = try h.lastLink()
        let oobCode = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
        return (verifier, number, oobCode)
    }

    @Test("the request's life: the right number approves once, a wrong one ends the approval (not the link), nothing else does")
    func life() throws {
        let email = try EmailAddress.parse("l@example.com")
        let request = ActionRequest(
            id: "r", purpose: .signIn, email: email, createdAt: 0, expiresAt: 100,
            approval: .init(number: 42, device: "d"))
        var right = ActionRequestLife(request)
        #expect(right.awaitsApproval(now: 1) && !right.isApproved(now: 1))
        #expect(right.pick(42, at: 1) == .approved)
        #expect(right.isApproved(now: 2) && !right.awaitsApproval(now: 2))
        #expect(right.pick(42, at: 2) == .refused, "approved once")
        var wrong = ActionRequestLife(request)
        #expect(wrong.pick(17, at: 1) == .cancelled)
        // The link and its 6-digit code live on: a wrong number (or a scanner) ends only the wait.
        #expect(wrong.phase(now: 1) == .open && !wrong.awaitsApproval(now: 1) && !wrong.isApproved(now: 1))
        #expect(wrong.pick(42, at: 2) == .refused, "the right number after a wrong one")
        var late = ActionRequestLife(request)
        #expect(late.pick(42, at: 100) == .refused, "expired")
        var plain = ActionRequestLife(ActionRequest(id: "p", purpose: .signIn, email: email, createdAt: 0, expiresAt: 100))
        #expect(plain.pick(42, at: 1) == .refused && !plain.awaitsApproval(now: 1))
    }

    @Test("a new approval: a number from 10 to 99 that the page's prompt does not give away")
    func newApproval() throws {
        var numbers = Set<Int>()
        for index in 0..<40 {
            let h = try FlowHarness()
            let (_, number, oobCode) = try ask(h, "n\(index)@example.com")
            #expect((10...99).contains(number))
            numbers.insert(number)
            let prompt = try #require(try h.service.emailLink.approvalPrompt(oobCode: oobCode))
            // The device and the address; no number (the struct has no place for one).
            #expect(prompt.device == "Chrome on Linux" && prompt.maskedEmail == "n•••@example.com")
        }
        // Drawn, not fixed (40 draws of 90 values all alike: 90^-39).
        #expect(numbers.count > 1)
    }

    @Test("a guess: of the 90 numbers a stranger's owner might type, one approves and the first wrong one ends the request")
    func guessing() throws {
        let h = try FlowHarness()
        let (verifier, number, oobCode) = try ask(h, "g@example.com")
        let guess = number == 99 ? 10 : number + 1
        #expect(try h.service.emailLink.pickApproval(oobCode: oobCode, number: guess) == .cancelled)
        for other in 10...99 {
            expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: other) }
        }
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.approvalResult(email: "g@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil)
        }
    }

    @Test("the page's prompt reads only; the right pick approves; the verifier's holder gets the session once")
    func approveAndTake() throws {
        let h = try FlowHarness()
        let (verifier, number, oobCode) = try ask(h, "a@example.com")
        for _ in 0..<5 {
            let prompt = try #require(try h.service.emailLink.approvalPrompt(oobCode: oobCode))
            #expect(prompt.device == "Chrome on Linux" && prompt.maskedEmail == "a•••@example.com")
        }
        #expect(try h.service.emailLink.approvalResult(email: "a@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil) == nil)
        #expect(try h.service.emailLink.pickApproval(oobCode: oobCode, number: number) == .approved(device: "Chrome on Linux"))
        // The owner's notice is queued.
        #expect(h.store.queuedMail().last?.intent == .signInApproved(device: "Chrome on Linux"))
        // A second pick, or a prompt, after the approval is refused.
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: number) }
        // Someone else's verifier gets nothing.
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.approvalResult(email: "a@example.com", codeVerifier: verifier + "x", idToken: nil, allowMigration: nil)
        }
        // The waiting device polls from its own network; its session takes the name the owner approved.
        let login = try #require(try SessionOrigin.$current.withValue(SessionOrigin(deviceName: "an app on iPhone", clientIP: "198.51.100.20")) {
            try h.service.emailLink.approvalResult(email: "a@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil)
        })
        #expect(login.isNewUser && login.email == "a@example.com")
        let session = try #require(try h.service.sessions.deviceSessions(idToken: login.session.idToken).sessions.first)
        #expect(session.deviceName == "Chrome on Linux" && session.network == "198.51.100.0/24")
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.approvalResult(email: "a@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil)
        }
    }

    @Test("the approved link itself does not sign a browser in: without the verifier PKCE refuses it")
    func linkAloneIsNotEnough() throws {
        let h = try FlowHarness()
        let (_, number, oobCode) = try ask(h, "b@example.com")
        _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: number)
        expectAuthError("INVALID_CODE_VERIFIER") { _ = try h.service.emailLink.complete(EmailLinkCompletion(oobCode: oobCode)) }
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(oobCode: oobCode, email: "b@example.com"))
        }
    }

    @Test("a wrong number cancels: no session for the waiting device, no notice")
    func wrongPickCancels() throws {
        let h = try FlowHarness()
        let (verifier, number, oobCode) = try ask(h, "c@example.com")
        let wrong = number == 10 ? 11 : number - 1
        let mails = h.store.queuedMail().count
        #expect(try h.service.emailLink.pickApproval(oobCode: oobCode, number: wrong) == .cancelled)
        #expect(h.store.queuedMail().count == mails)
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: number) }
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.approvalResult(email: "c@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil)
        }
    }

    @Test("after a wrong number the mail's 6-digit code still signs the asking device in (it used to die with the approval)")
    func wrongPickLeavesTheCode() throws {
        let h = try FlowHarness()
        let (_, number, oobCode) = try ask(h, "fallback@example.com")
        let code = try h.lastCode()
        #expect(try h.service.emailLink.pickApproval(oobCode: oobCode, number: number == 10 ? 11 : number - 1) == .cancelled)
        #expect(try h.service.emailLink.approvalPrompt(oobCode: oobCode) == nil, "no approval left to review")
        let login = try h.service.emailLink.complete(EmailLinkCompletion(code: code, email: "fallback@example.com"))
        #expect(login.email == "fallback@example.com")
    }

    @Test("an anonymous waiting device keeps its uid; an existing account asks for migration first, consuming nothing")
    func anonymousAndMigration() throws {
        let h = try FlowHarness()
        let guest = try h.service.sessions.signInAnonymously()
        let (verifier, number, oobCode) = try ask(h, "d@example.com")
        _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: number)
        let login = try #require(try h.service.emailLink.approvalResult(email: "d@example.com", codeVerifier: verifier, idToken: guest.idToken, allowMigration: nil))
        #expect(login.uid == guest.uid)

        let second = try h.service.sessions.signInAnonymously()
        let again = try ask(h, "d@example.com")
        _ = try h.service.emailLink.pickApproval(oobCode: again.oobCode, number: again.number)
        expectAuthError("MIGRATION_REQUIRED") {
            _ = try h.service.emailLink.approvalResult(email: "d@example.com", codeVerifier: again.verifier, idToken: second.idToken, allowMigration: nil)
        }
        let migrated = try #require(try h.service.emailLink.approvalResult(
            email: "d@example.com", codeVerifier: again.verifier, idToken: second.idToken, allowMigration: true))
        #expect(migrated.uid == guest.uid && migrated.migration?.fromUid == second.uid)
    }

    @Test("an approval needs PKCE and a usable device name; control characters are dropped")
    func inputs() throws {
        let h = try FlowHarness()
        expectAuthError("INVALID_ARGUMENT") { try h.service.emailLink.send(EmailLinkRequest(email: "e@example.com", approvalDevice: "x")) }
        let challenge = Base64URL.encode(SHA256.hash("v"))
        expectAuthError("INVALID_ARGUMENT") {
            try h.service.emailLink.send(EmailLinkRequest(email: "e@example.com", codeChallenge: challenge, approvalDevice: " \n "))
        }
        expectAuthError("INVALID_ARGUMENT") {
            try h.service.emailLink.send(EmailLinkRequest(email: "e@example.com", codeChallenge: challenge, approvalDevice: String(repeating: "x", count: 65)))
        }
        let (_, _, oobCode) = try ask(h, "e@example.com", device: "Evil\u{1B}[31m\nDevice")
        #expect(try h.service.emailLink.approvalPrompt(oobCode: oobCode)?.device == "Evil[31mDevice")
        // A plain sign-in link has no prompt.
        try h.service.emailLink.send(EmailLinkRequest(email: "f@example.com"))
        let plain = try #require(URLComponents(string: try h.lastLink())?.queryItems?.first { $0.name == "oobCode" }?.value)
        #expect(try h.service.emailLink.approvalPrompt(oobCode: plain) == nil)
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.pickApproval(oobCode: plain, number: 42) }
    }

    @Test("an approval expires with its link")
    func expires() throws {
        let h = try FlowHarness()
        let (verifier, number, oobCode) = try ask(h, "g@example.com")
        h.clock.advance(by: 601)
        #expect(throws: AuthError.self) { _ = try h.service.emailLink.pickApproval(oobCode: oobCode, number: number) }
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.approvalResult(email: "g@example.com", codeVerifier: verifier, idToken: nil, allowMigration: nil)
        }
    }
}
