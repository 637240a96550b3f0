import Foundation
import PosternCore
import Testing

@Suite("Verification, change of address, recovery and profiles")
struct FlowAddressTests {
    @Test("verification link marks the address verified")
    func verify() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        _ = try h.service.operators.updateUser(uid: login.uid, disabled: nil, emailVerified: false, displayName: nil)
        try h.service.addresses.requestVerification(idToken: login.session.idToken, continueURL: nil)
        let link = try h.lastLink()
        #expect(try h.service.addresses.inspect(link: link, oobCode: nil).mode == .verifyEmail)
        #expect(try h.account(login.uid)?.emailVerified == false, "inspect changes nothing")
        _ = try h.service.addresses.apply(link: link, oobCode: nil, newPassword: nil)
        #expect(try h.account(login.uid)?.emailVerified == true)
        let anonymous = try h.service.sessions.signInAnonymously()
        expectAuthError("ANONYMOUS_ACCOUNT") { try h.service.addresses.requestVerification(idToken: anonymous.idToken, continueURL: nil) }
    }

    @Test("change of address: the new address's link moves it; the old address gets a recovery link that moves it back and revokes sessions")
    func changeAndRecover() throws {
        let h = try FlowHarness()
        let login = try h.signIn("old@example.com")
        try h.service.addresses.requestChange(idToken: login.session.idToken, newEmail: "new@example.com", continueURL: nil)
        let mail = try #require(try h.lastMail())
        #expect(mail.message.recipient.address == "new@example.com")
        let change = try h.lastLink()
        #expect(try h.account(login.uid)?.email?.address == "old@example.com", "nothing moves before the link")
        let applied = try h.service.addresses.apply(link: change, oobCode: nil, newPassword: nil)
        #expect(applied.mode == .verifyAndChangeEmail)
        #expect(try h.account(login.uid)?.email?.address == "new@example.com")

        let recoveryMail = try #require(try h.lastMail())
        #expect(recoveryMail.message.recipient.address == "old@example.com")
        guard case .recoverEmail = recoveryMail.message.content else { Issue.record("recover-email mail"); return }
        let recover = try h.lastLink()
        expectAuthError("LINK_USED") { _ = try h.service.addresses.apply(link: change, oobCode: nil, newPassword: nil) }
        h.clock.advance(by: 6 * 86_400)
        _ = try h.service.addresses.apply(link: recover, oobCode: nil, newPassword: nil)
        #expect(try h.account(login.uid)?.email?.address == "old@example.com")
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.addresses.apply(link: change, oobCode: nil, newPassword: nil) }
    }

    @Test("a change needs a recent sign-in, and the new address must be free when applied")
    func changeGuards() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        try h.service.addresses.requestChange(idToken: login.session.idToken, newEmail: "b@example.com", continueURL: nil)
        let link = try h.lastLink()
        _ = try h.signIn("b@example.com")
        expectAuthError("EMAIL_EXISTS") { _ = try h.service.addresses.apply(link: link, oobCode: nil, newPassword: nil) }
        #expect(try h.account(login.uid)?.email?.address == "a@example.com")
        h.clock.advance(by: 301)
        expectAuthError("REQUIRES_RECENT_LOGIN") {
            try h.service.addresses.requestChange(idToken: login.session.idToken, newEmail: "c@example.com", continueURL: nil)
        }
    }

    @Test("profiles: display name and attributes; limits name the field")
    func profile() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        let updated = try h.service.profiles.update(
            idToken: login.session.idToken, displayName: "Ada", attributes: #"{"bio":"Analyst"}"#)
        #expect(updated.displayName == "Ada")
        #expect(updated.attributes == #"{"bio":"Analyst"}"#)
        #expect(updated.providers == ["emailLink"])
        #expect(try h.service.profiles.me(idToken: login.session.idToken).displayName == "Ada")
        let big = #"{"bio":""# + String(repeating: "x", count: 4100) + #""}"#
        let tooBig = expectAuthError("INVALID_ARGUMENT") {
            _ = try h.service.profiles.update(idToken: login.session.idToken, displayName: nil, attributes: big)
        }
        #expect(tooBig?.message.contains("attributes") == true)
        expectAuthError("INVALID_ARGUMENT") {
            _ = try h.service.profiles.update(idToken: login.session.idToken, displayName: nil, attributes: "[1]")
        }
        // A NUL (the store's text binding cut the name there), any other control, a line break.
        for name in ["Ada\u{0}Admin", "Ada\u{1B}[31m", "Ada\u{85}", "Ada\u{2028}", "Ada\n"] {
            expectAuthError("INVALID_ARGUMENT") { _ = try h.service.profiles.update(idToken: login.session.idToken, displayName: name, attributes: nil) }
            expectAuthError("INVALID_ARGUMENT") { _ = try h.service.operators.updateUser(uid: login.uid, disabled: nil, emailVerified: nil, displayName: name) }
        }
        #expect(try h.service.profiles.me(idToken: login.session.idToken).displayName == "Ada")
        try h.service.profiles.delete(idToken: login.session.idToken)
        #expect(try h.account(login.uid) == nil)
    }
}
