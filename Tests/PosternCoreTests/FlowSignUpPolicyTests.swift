import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// Who may sign up (`--sign-up`, `--sign-up-domains`, issue 48 point 4) over the in-memory store:
/// every path that would create an account, in each mode; the content stage's refusal; a link
/// minted while open and used after closing.
@Suite("Sign-up policy: every creation path by mode and domain; refused sign-ups mail nothing")
struct FlowSignUpPolicyTests {
    /// Flows under `mode` with phone sign-in on and, when `provider` is given, Google's sign-in
    /// served by it (audience `app-client`).
    static func harness(
        _ mode: SignUpPolicy.Mode, domains: Set<String> = [], notice: Bool = false, provider idp: TestIdentityProvider? = nil,
        restarting: FlowHarness? = nil
    ) throws -> FlowHarness {
        let registry = try idp.map { idp in
            let issuer = TestIdentityProvider.issuer
            let providers = try IdentityProvider.parseList(Data("""
                [{"id": "google", "issuer": "\(issuer)", "jwksUri": "\(issuer)/jwks", "audiences": ["app-client"]}]
                """.utf8))
            return ProviderRegistry(providers: providers, clientSecrets: [:], http: idp)
        }
        return try FlowHarness(identityProviders: registry ?? .none, restarting: restarting) {
            $0.signUp = SignUpPolicy(mode: mode, domains: domains, closedNotice: notice)
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
        }
    }

    static func accounts(_ h: FlowHarness) -> Int { h.store.snapshot().accounts.count }

    @Test("domains: the exact, normalized IDNA domain only; no subdomain, no suffix trick; an invitation and every mode's anonymous rule")
    func policyDomains() throws {
        let policy = SignUpPolicy(mode: .open, domains: ["example.com", "xn--bcher-kva.example"])
        for allowed in ["a@example.com", "A@EXAMPLE.com", "a@Example.COM", "a@bücher.example", "a@BÜCHER.example", "a@xn--bcher-kva.example"] {
            #expect(policy.allows(try EmailAddress.parse(allowed)), "\(allowed)")
        }
        for refused in ["a@example.com.evil.org", "a@sub.example.com", "a@evilexample.com", "a@example.co", "a@bucher.example"] {
            #expect(!policy.allows(try EmailAddress.parse(refused)), "\(refused)")
        }
        #expect(policy.allows(try EmailAddress.parse("a@elsewhere.org"), invited: true))
        #expect(policy.allowsAnonymous && !policy.allowsWithoutAddress)
        for mode in [SignUpPolicy.Mode.invite, .closed] {
            let shut = SignUpPolicy(mode: mode)
            let address = try EmailAddress.parse("a@example.com")
            #expect(!shut.allows(address) && shut.allows(address, invited: true))
            #expect(!shut.allowsAnonymous && !shut.allowsWithoutAddress)
        }
        let anywhere = try EmailAddress.parse("a@anything.test")
        #expect(SignUpPolicy.open.allows(anywhere) && SignUpPolicy.open.allowsWithoutAddress)
    }

    @Test("settings: --sign-up, --sign-up-domains (IDNA, lower-cased), --sign-up-closed-notice, --invitation-lifetime; bad values name the flag")
    func settings() throws {
        let settings = try Settings.resolve(
            flags: ["sign-up": "Invite", "sign-up-domains": "Example.com, bücher.example", "sign-up-closed-notice": "true", "invitation-lifetime": "3600"],
            environment: [:], file: [:])
        #expect(settings.signUp == SignUpPolicy(mode: .invite, domains: ["example.com", "xn--bcher-kva.example"], closedNotice: true))
        #expect(settings.invitationLifetime == 3600 && AuthConfiguration(settings).signUp == settings.signUp)
        #expect(try Settings.resolve(flags: [:], environment: [:], file: [:]).signUp == .open)
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["sign-up": "maybe"], environment: [:], file: [:]) }
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["sign-up-domains": " , "], environment: [:], file: [:]) }
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["sign-up-domains": "exa mple.com"], environment: [:], file: [:]) }
    }

    @Test("email link, closed and invite: the send answers as for anyone, the unknown address is mailed nothing (or the notice); its account signs in")
    func emailLinkRefused() throws {
        for mode in [SignUpPolicy.Mode.closed, .invite] {
            let open = try Self.harness(.open)
            try open.signIn("member@example.com")
            let h = try Self.harness(mode, restarting: open)
            #expect(try h.service.emailLink.send(EmailLinkRequest(email: "stranger@example.com")) == nil)
            #expect(h.store.queuedMail().count == 2, "recorded and queued like any request")
            #expect(try h.lastMail() == nil, "no link for an address that may not sign up")
            let login = try h.signIn("member@example.com")
            #expect(!login.isNewUser && Self.accounts(h) == 1)
            let noticed = try Self.harness(mode, notice: true)
            try noticed.service.emailLink.send(EmailLinkRequest(email: "stranger@example.com", locale: "de"))
            let notice = try #require(try noticed.lastMail())
            #expect(notice.message.content == .signUpClosed && notice.message.recipient.address == "stranger@example.com")
            #expect(notice.localePreferences.first == "de")
        }
    }

    @Test("email link, open with domains: the listed domain signs up, example.com.evil.org and a subdomain get nothing")
    func emailLinkDomains() throws {
        let h = try Self.harness(.open, domains: ["example.com"])
        let login = try h.signIn("New@EXAMPLE.com")
        #expect(login.isNewUser)
        for refused in ["a@example.com.evil.org", "a@mail.example.com"] {
            try h.service.emailLink.send(EmailLinkRequest(email: refused))
            #expect(try h.lastMail() == nil, "\(refused)")
        }
        #expect(Self.accounts(h) == 1)
    }

    @Test("a link minted while sign-ups were open, used after they closed: SIGN_UP_NOT_ALLOWED, no account, nothing consumed")
    func linkMintedOpenUsedClosed() throws {
        let open = try Self.harness(.open)
        try open.service.emailLink.send(EmailLinkRequest(email: "late@example.com"))
        let link = try open.lastLink()
        let closed = try Self.harness(.closed, restarting: open)
        expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try closed.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(Self.accounts(closed) == 0 && closed.store.snapshot().consumed.isEmpty)
        // The typed 6-digit code of the same mail: the same refusal.
        guard case .signIn(_, let code, _) = try #require(try open.lastMail()).message.content else { throw FlowHarness.HarnessError.noMail }
        expectAuthError("SIGN_UP_NOT_ALLOWED") {
            _ = try closed.service.emailLink.complete(EmailLinkCompletion(code: code, email: "late@example.com"))
        }
        #expect(Self.accounts(closed) == 0)
    }

    @Test("password sign-up, closed: nothing mailed to a new address; a taken one still gets account-already-exists")
    func passwordSignUp() throws {
        let open = try Self.harness(.open)
        try open.signIn("member@example.com")
        let h = try Self.harness(.closed, restarting: open)
        try h.service.passwords.signUp(email: "new@example.com", password: "correct horse battery", idToken: nil, continueURL: nil, locale: nil)
        #expect(try h.lastMail() == nil)
        try h.service.passwords.signUp(email: "member@example.com", password: "correct horse battery", idToken: nil, continueURL: nil, locale: nil)
        guard case .accountAlreadyExists = try #require(try h.lastMail()).message.content else {
            Issue.record("a taken address is told it has an account")
            return
        }
    }

    @Test("anonymous sign-in: SIGN_UP_NOT_ALLOWED unless open; open with domains it works, and cannot gain an address outside them")
    func anonymous() throws {
        for mode in [SignUpPolicy.Mode.closed, .invite] {
            let h = try Self.harness(mode)
            expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try h.service.sessions.signInAnonymously() }
            #expect(Self.accounts(h) == 0)
        }
        // Minted while any domain could sign up, completed once only example.com may.
        let open = try Self.harness(.open)
        let anonymous = try open.service.sessions.signInAnonymously()
        try open.service.emailLink.send(EmailLinkRequest(email: "someone@evil.org", codeChallenge: nil, idToken: anonymous.idToken))
        let link = try open.lastLink()
        let limited = try Self.harness(.open, domains: ["example.com"], restarting: open)
        expectAuthError("SIGN_UP_NOT_ALLOWED") {
            _ = try limited.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: anonymous.idToken))
        }
        #expect(try limited.account(anonymous.uid)?.email == nil)
        // And the content stage sends such a session no link to begin with.
        try limited.service.emailLink.send(EmailLinkRequest(email: "other@evil.org", idToken: anonymous.idToken))
        #expect(try limited.lastMail() == nil)
        // An address at a listed domain upgrades it.
        let upgraded = try limited.signIn("ok@example.com", idToken: anonymous.idToken)
        #expect(upgraded.uid == anonymous.uid && upgraded.isNewUser)
    }

    @Test("phone sign-in: a new number makes no account unless open to every domain; an existing phone account signs in")
    func phone() throws {
        let number = "+4915112345678"
        let open = try Self.harness(.open)
        try open.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
        let first = try open.service.phoneSignIn.complete(phoneNumber: number, code: try open.lastSMSCode(), idToken: nil, allowMigration: nil)
        for (mode, domains) in [(SignUpPolicy.Mode.closed, Set<String>()), (.invite, []), (.open, ["example.com"])] {
            let h = try Self.harness(mode, domains: domains, restarting: open)
            try h.service.phoneSignIn.send(phoneNumber: "+4915112345679", locale: nil, idToken: nil, clientIP: "192.0.2.1")
            let code = try h.lastSMSCode()
            expectAuthError("SIGN_UP_NOT_ALLOWED") {
                _ = try h.service.phoneSignIn.complete(phoneNumber: "+4915112345679", code: code, idToken: nil, allowMigration: nil)
            }
            #expect(Self.accounts(h) == 1)
            try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
            let again = try h.service.phoneSignIn.complete(phoneNumber: number, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
            #expect(again.uid == first.uid && !again.isNewUser)
        }
    }

    @Test("provider sign-in: a new account by the provider's verified address under the policy; an existing one signs in when closed")
    func provider() throws {
        let idp = try TestIdentityProvider()
        func harness(_ mode: SignUpPolicy.Mode, _ domains: Set<String>, restarting: FlowHarness? = nil) throws -> FlowHarness {
            try Self.harness(mode, domains: domains, provider: idp, restarting: restarting)
        }
        func signIn(_ h: FlowHarness, _ sub: String, _ email: String?) throws -> LoginDescriptor {
            let token = try idp.token(sub: sub, aud: "app-client", now: h.clock.unixSeconds(), email: email, verified: true, nonce: nil, exp: nil)
            return try h.service.providerSignIn.signIn(provider: "google", token: token, nonce: nil, idToken: nil, allowMigration: nil, displayName: nil)
        }
        let limited = try harness(.open, ["example.com"])
        let member = try signIn(limited, "g-1", "ada@example.com")
        #expect(member.isNewUser)
        expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try signIn(limited, "g-2", "eve@example.com.evil.org") }
        expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try signIn(limited, "g-3", nil) }
        let closed = try harness(.closed, [], restarting: limited)
        expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try signIn(closed, "g-4", "new@example.com") }
        let again = try signIn(closed, "g-1", "ada@example.com")
        #expect(again.uid == member.uid && !again.isNewUser && Self.accounts(closed) == 1)
    }

    @Test("an anonymous account made while open is not kept for good after closing: its upgrade by phone or by a provider without an address is refused, and stays anonymous")
    func anonymousUpgradeAfterClosing() throws {
        let idp = try TestIdentityProvider()
        func harness(_ mode: SignUpPolicy.Mode, restarting: FlowHarness? = nil) throws -> FlowHarness {
            try Self.harness(mode, provider: idp, restarting: restarting)
        }
        let open = try harness(.open)
        let anonymous = try open.service.sessions.signInAnonymously()
        let closed = try harness(.closed, restarting: open)
        // By phone: the code is right, the upgrade is refused, nothing is consumed or linked.
        try closed.service.phoneSignIn.send(phoneNumber: "+4915112345670", locale: nil, idToken: anonymous.idToken, clientIP: "192.0.2.1")
        let code = try closed.lastSMSCode()
        expectAuthError("SIGN_UP_NOT_ALLOWED") {
            _ = try closed.service.phoneSignIn.complete(phoneNumber: "+4915112345670", code: code, idToken: anonymous.idToken, allowMigration: nil)
        }
        // By a provider that verified no address.
        let token = try idp.token(sub: "g-anon", aud: "app-client", now: closed.clock.unixSeconds(), email: nil, verified: true, nonce: nil, exp: nil)
        expectAuthError("SIGN_UP_NOT_ALLOWED") {
            _ = try closed.service.providerSignIn.signIn(
                provider: "google", token: token, nonce: nil, idToken: anonymous.idToken, allowMigration: nil, displayName: nil)
        }
        let account = try #require(try closed.account(anonymous.uid))
        #expect(account.isAnonymous && account.providers.isEmpty && Self.accounts(closed) == 1)
        // Open again, the same upgrade by phone goes through (the refused code was not consumed).
        let reopened = try harness(.open, restarting: closed)
        let upgraded = try reopened.service.phoneSignIn.complete(
            phoneNumber: "+4915112345670", code: code, idToken: anonymous.idToken, allowMigration: nil)
        #expect(upgraded.uid == anonymous.uid && upgraded.isNewUser)
    }

    @Test("invite mode: an invited address signs up by any way while its invitation is open (which that ends); closed: only by the invitation's link")
    func inviteModeOpensOtherWays() throws {
        let h = try Self.harness(.invite)
        _ = try h.service.operators.invite(email: "guest@example.com", continueURL: nil, locale: nil)
        let invitationLink = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "uninvited@example.com"))
        #expect(try h.lastMail() == nil)
        let login = try h.signIn("guest@example.com")
        #expect(login.isNewUser && Self.accounts(h) == 1)
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: invitationLink)) }
        let closed = try Self.harness(.closed)
        _ = try closed.service.operators.invite(email: "guest@example.com", continueURL: nil, locale: nil)
        try closed.service.emailLink.send(EmailLinkRequest(email: "guest@example.com"))
        #expect(try closed.lastMail() == nil, "closed: the invitation's own link, nothing else")
    }

    @Test("invitation, closed: creates exactly its address's account once; twice, another session, another address, late: refused")
    func invitation() throws {
        let h = try Self.harness(.closed, domains: ["example.com"])
        let invited = try h.service.operators.invite(email: "Guest@Partner.org", continueURL: "https://app.example.com/welcome", locale: "de")
        #expect(invited.email == "Guest@partner.org" && invited.expiresAt == h.clock.unixSeconds() + 7 * 86_400)
        let mail = try #require(try h.lastMail())
        guard case .invitation(let link, _) = mail.message.content else {
            Issue.record("an invitation mail, not \(mail.message.content)")
            return
        }
        #expect(mail.localePreferences.first == "de" && link.contains("mode=signIn") && link.contains("continueUrl="))
        // A session of another account presenting it: refused, nothing made or used.
        let other = try Self.harness(.open, restarting: h)
        let b = try other.signIn("b@example.com")
        expectAuthError("LINK_OTHER_SESSION") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, idToken: b.session.idToken)) }
        expectAuthError("EMAIL_MISMATCH") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, email: "b@example.com")) }
        #expect(try h.store.read { try $0.account(address: try EmailAddress.parse("guest@partner.org")) } == nil)
        #expect(try h.account(b.uid)?.email?.address == "b@example.com")
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
        #expect(login.isNewUser && login.email == "Guest@partner.org")
        expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(Self.accounts(h) == 2)
        // An address with an account: told, and nothing queued.
        let queued = h.store.queuedMail().count
        expectAuthError("EMAIL_EXISTS") { _ = try h.service.operators.invite(email: "guest@partner.org", continueURL: nil, locale: nil) }
        #expect(h.store.queuedMail().count == queued)
        // Past --invitation-lifetime: expired, no account.
        _ = try h.service.operators.invite(email: "late@partner.org", continueURL: nil, locale: nil)
        let lateLink = try h.lastLink()
        h.clock.advance(by: 7 * 86_400 + 1)
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: lateLink)) }
        #expect(Self.accounts(h) == 2)
    }
}
