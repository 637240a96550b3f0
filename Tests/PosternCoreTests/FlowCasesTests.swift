import Foundation
import PosternCore
import Testing

@Suite("The six cases of a sign-in with a session presented")
struct FlowCasesTests {
    @Test("anonymous + no account: the anonymous account gets the address, same uid, isNewUser")
    func anonymousUpgrade() throws {
        let h = try FlowHarness()
        let anonymous = try h.service.sessions.signInAnonymously()
        #expect(anonymous.isAnonymous)
        let login = try h.signIn("a@example.com", idToken: anonymous.idToken)
        #expect(login.uid == anonymous.uid)
        #expect(login.isNewUser)
        #expect(login.migration == nil)
        #expect(try h.account(anonymous.uid)?.email?.address == "a@example.com")
    }

    @Test("anonymous + existing account: MIGRATION_REQUIRED consumes nothing; allowMigration signs in and deletes the anonymous account")
    func migration() throws {
        let h = try FlowHarness()
        let existing = try h.signIn("a@example.com")
        let anonymous = try h.service.sessions.signInAnonymously()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", idToken: anonymous.idToken))
        let link = try h.lastLink()
        let refused = expectAuthError("MIGRATION_REQUIRED") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: anonymous.idToken))
        }
        #expect(refused?.kind == .conflict)
        #expect(refused?.details["anonymousUid"] == anonymous.uid)
        let login = try h.service.emailLink.complete(
            EmailLinkCompletion(link: link, idToken: anonymous.idToken, allowMigration: true))
        #expect(login.uid == existing.uid)
        #expect(login.isNewUser == false)
        #expect(login.migration == .init(fromUid: anonymous.uid, toUid: existing.uid, allowMigration: true))
        #expect(try h.account(anonymous.uid) == nil)
    }

    @Test("normal session + no account: the address is linked to the presented account")
    func linkAddress() throws {
        let h = try FlowHarness()
        let owner = try h.signIn("old@example.com")
        let login = try h.signIn("new@example.com", idToken: owner.session.idToken)
        #expect(login.uid == owner.uid)
        #expect(login.isNewUser)
        #expect(try h.account(owner.uid)?.email?.address == "new@example.com")
        guard case .recoverEmail = h.store.queuedMail().last?.intent else {
            Issue.record("the old address must get a recovery link")
            return
        }
    }

    @Test("normal session + same account: reauthentication with a fresh auth_time")
    func reauthenticate() throws {
        let h = try FlowHarness()
        let first = try h.signIn("a@example.com")
        h.clock.advance(by: 600)
        expectAuthError("REQUIRES_RECENT_LOGIN") { try h.service.profiles.delete(idToken: first.session.idToken) }
        let again = try h.signIn("a@example.com", idToken: first.session.idToken)
        #expect(again.uid == first.uid)
        #expect(again.isNewUser == false)
        let claims = try h.service.sessions.verifyIDToken(again.session.idToken).claims
        #expect(claims.authTime == h.clock.unixSeconds())
    }

    @Test("normal session + another account: CREDENTIAL_ALREADY_IN_USE, nothing consumed")
    func credentialInUse() throws {
        let h = try FlowHarness()
        _ = try h.signIn("a@example.com")
        let other = try h.signIn("b@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        let error = expectAuthError("CREDENTIAL_ALREADY_IN_USE") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: other.session.idToken))
        }
        #expect(error?.kind == .conflict)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
    }

    @Test("the resolution table, exhaustively")
    func table() {
        let anonymous = Account(uid: "anon", createdAt: 0)
        let normal = Account(uid: "n", email: try? EmailAddress.parse("n@example.com"), createdAt: 0)
        let holder = Account(uid: "h", email: try? EmailAddress.parse("h@example.com"), createdAt: 0)
        #expect(SignInResolution.resolve(presented: nil, holder: nil, allowMigration: false) == .create)
        #expect(SignInResolution.resolve(presented: nil, holder: holder, allowMigration: false) == .signIn(holder: "h"))
        #expect(SignInResolution.resolve(presented: anonymous, holder: nil, allowMigration: false) == .upgradeAnonymous(uid: "anon"))
        #expect(SignInResolution.resolve(presented: anonymous, holder: holder, allowMigration: nil) == .migrationRequired(anonymousUid: "anon"))
        #expect(SignInResolution.resolve(presented: anonymous, holder: holder, allowMigration: true) == .migrate(from: "anon", to: "h", moveData: true))
        #expect(SignInResolution.resolve(presented: anonymous, holder: holder, allowMigration: false) == .migrate(from: "anon", to: "h", moveData: false))
        #expect(SignInResolution.resolve(presented: normal, holder: nil, allowMigration: false) == .link(uid: "n"))
        #expect(SignInResolution.resolve(presented: holder, holder: holder, allowMigration: false) == .reauthenticate(uid: "h"))
        #expect(SignInResolution.resolve(presented: normal, holder: holder, allowMigration: true) == .credentialInUse)
    }
}
