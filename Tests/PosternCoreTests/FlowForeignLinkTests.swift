import Foundation
import PosternCore
import PosternCrypto
import Testing

/// A sign-in link someone else asked for changes no signed-in account: the attacker asks for a
/// link to a fresh address of theirs and forwards it ("confirm here"); the victim's app completes
/// it with the victim's session, as the client library does with every link it opens. Before,
/// the victim's account took the attacker's address, and the attacker signed in to it with the
/// next link to that address.
@Suite("A forwarded link changes no account that did not ask for it")
struct FlowForeignLinkTests {
    @Test("a normal session completing a stranger's link: LINK_OTHER_SESSION, its address kept, nothing consumed")
    func forwardedToNormalSession() throws {
        let h = try FlowHarness()
        let victim = try h.signIn("victim@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: "evil@attacker.test"))
        let forwarded = try h.lastLink()
        let refused = expectAuthError("LINK_OTHER_SESSION") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: forwarded, idToken: victim.session.idToken))
        }
        #expect(refused?.kind == .conflict)
        #expect(try h.account(victim.uid)?.email?.address == "victim@example.com")
        // The 6-digit code typed into the victim's session, the same.
        expectAuthError("LINK_OTHER_SESSION") {
            _ = try h.service.emailLink.complete(
                EmailLinkCompletion(code: try h.lastCode(), email: "evil@attacker.test", idToken: victim.session.idToken))
        }
        // Nothing was consumed: without a session the link signs in to its own address, a new account.
        let own = try h.service.emailLink.complete(EmailLinkCompletion(link: forwarded))
        #expect(own.uid != victim.uid)
        #expect(try h.account(victim.uid)?.email?.address == "victim@example.com")
    }

    @Test("a link asked for with the attacker's session is refused to the victim's session too")
    func askedWithAnotherSession() throws {
        let h = try FlowHarness()
        let attacker = try h.signIn("attacker@attacker.test")
        let victim = try h.signIn("victim@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: "evil@attacker.test", idToken: attacker.session.idToken))
        expectAuthError("LINK_OTHER_SESSION") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: victim.session.idToken))
        }
        #expect(try h.account(victim.uid)?.email?.address == "victim@example.com")
    }

    @Test("an anonymous session neither takes a stranger's address nor has its data moved to the stranger's account")
    func forwardedToAnonymousSession() throws {
        let h = try FlowHarness()
        let anonymous = try h.service.sessions.signInAnonymously()
        // A fresh address: the anonymous account (and its app data) would become the attacker's.
        try h.service.emailLink.send(EmailLinkRequest(email: "evil@attacker.test"))
        expectAuthError("LINK_OTHER_SESSION") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: anonymous.idToken))
        }
        #expect(try h.account(anonymous.uid)?.email == nil)
        // The attacker's existing account: migrating would move the data there.
        let attacker = try h.signIn("attacker@attacker.test")
        try h.service.emailLink.send(EmailLinkRequest(email: "attacker@attacker.test"))
        let link = try h.lastLink()
        for allow in [nil, true, false] as [Bool?] {
            expectAuthError("LINK_OTHER_SESSION") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: anonymous.idToken, allowMigration: allow))
            }
        }
        #expect(try h.account(anonymous.uid) != nil)
        #expect(try h.service.emailLink.complete(EmailLinkCompletion(link: link)).uid == attacker.uid)
    }

    @Test("an old session asking for itself links no address without a recent sign-in; a recent one does")
    func staleSessionLinksNothing() throws {
        let h = try FlowHarness()
        let victim = try h.signIn("victim@example.com")
        // A thief with the victim's ID token (refreshed tokens keep the old auth_time).
        h.clock.advance(by: 600)
        try h.service.emailLink.send(EmailLinkRequest(email: "evil@attacker.test", idToken: victim.session.idToken))
        let link = try h.lastLink()
        expectAuthError("REQUIRES_RECENT_LOGIN") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: victim.session.idToken))
        }
        #expect(try h.account(victim.uid)?.email?.address == "victim@example.com")
        // The owner signs in again (reauthenticates) and links the new address: the link still works.
        let fresh = try h.signIn("victim@example.com", idToken: victim.session.idToken)
        try h.service.emailLink.send(EmailLinkRequest(email: "new@example.com", idToken: fresh.session.idToken))
        let linked = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: fresh.session.idToken))
        #expect(linked.uid == victim.uid)
        #expect(try h.account(victim.uid)?.email?.address == "new@example.com")
    }

    @Test("a sign-up asked with an old stolen session sets neither the thief's address nor password on the account")
    func staleSessionSignUp() throws {
        let h = try FlowHarness()
        let victim = try h.signIn("victim@example.com")
        h.clock.advance(by: 600)
        let verifier = "thief-verifier-" + Base64URL.encode(try SecureRandom.bytes(24))
        try h.service.passwords.signUp(
            email: "evil@attacker.test", password: "the thief's password", idToken: victim.session.idToken, continueURL: nil,
            locale: nil, codeChallenge: Base64URL.encode(SHA256.hash(verifier)))
        expectAuthError("REQUIRES_RECENT_LOGIN") {
            _ = try h.service.emailLink.complete(
                EmailLinkCompletion(link: try h.lastLink(), codeVerifier: verifier, idToken: victim.session.idToken))
        }
        let account = try h.account(victim.uid)
        #expect(account?.email?.address == "victim@example.com")
        #expect(account?.passwordHash == nil)
    }
}

/// A thief with a recent session files several address changes, applies one, and is thrown out by
/// the owner's recovery (or password reset): the changes still pending end with it. Before, the
/// account was back on the old address, the next pending link matched it again, and the thief
/// applied it (`POST /v1/actions/apply` needs no session) and signed in at the new address.
@Suite("Recovery and reset end the address changes still pending")
struct FlowPendingChangeTests {
    @Test("after the owner recovers the address, another pending change link is refused")
    func recoveryEndsPendingChanges() throws {
        let h = try FlowHarness()
        let owner = try h.signIn("owner@example.com")
        try h.service.addresses.requestChange(idToken: owner.session.idToken, newEmail: "c@attacker.test", continueURL: nil)
        let first = try h.lastLink()
        try h.service.addresses.requestChange(idToken: owner.session.idToken, newEmail: "d@attacker.test", continueURL: nil)
        let pending = try h.lastLink()
        _ = try h.service.addresses.apply(link: first, oobCode: nil, newPassword: nil)
        #expect(try h.account(owner.uid)?.email?.address == "c@attacker.test")
        // The owner's recovery link (mailed to the old address) puts it back and ends every session.
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        #expect(try h.account(owner.uid)?.email?.address == "owner@example.com")
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.addresses.apply(link: pending, oobCode: nil, newPassword: nil) }
        #expect(try h.account(owner.uid)?.email?.address == "owner@example.com")
    }

    @Test("after a password reset, a pending change link is refused; without one it still applies")
    func resetEndsPendingChanges() throws {
        let h = try FlowHarness()
        let owner = try h.signIn("owner@example.com")
        try h.service.addresses.requestChange(idToken: owner.session.idToken, newEmail: "d@attacker.test", continueURL: nil)
        let pending = try h.lastLink()
        try h.service.passwords.requestReset(email: "owner@example.com", continueURL: nil, locale: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "a brand new password")
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.addresses.apply(link: pending, oobCode: nil, newPassword: nil) }
        #expect(try h.account(owner.uid)?.email?.address == "owner@example.com")
        // A change asked after the reset, by the owner's new session, applies.
        let fresh = try h.signIn("owner@example.com")
        try h.service.addresses.requestChange(idToken: fresh.session.idToken, newEmail: "new@example.com", continueURL: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        #expect(try h.account(owner.uid)?.email?.address == "new@example.com")
    }
}
