import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// Sign in with a provider (issue 46) over the in-memory store: the six cases and migration, the
/// replay ledger, pre-hijacking, link and unlink. The provider is one of ours (`google` pointed at
/// a loopback issuer, keys made here); the interop test (Tests/integration/providers.sh) walks the
/// same against a provider nobody here wrote.
@Suite("Provider sign-in: the six cases, used once, no pre-hijacking, link and unlink")
struct FlowProviderSignInTests {
    let idp: TestIdentityProvider
    let h: FlowHarness

    init() throws {
        idp = try TestIdentityProvider()
        let issuer = TestIdentityProvider.issuer
        let providers = try IdentityProvider.parseList(Data("""
            [{"id": "google", "issuer": "\(issuer)", "jwksUri": "\(issuer)/jwks", "audiences": ["app-client"]},
             {"id": "apple", "issuer": "\(issuer)", "jwksUri": "\(issuer)/jwks", "audiences": ["com.example.app"]}]
            """.utf8))
        h = try FlowHarness(identityProviders: ProviderRegistry(providers: providers, clientSecrets: [:], http: idp)) {
            $0.webhooks = WebhookConfiguration(endpoints: ["https://hooks.example.com/a"])
        }
    }

    /// A token of the test provider for `sub`, fresh each time (its `jti` differs).
    func token(_ sub: String = "g-1", email: String? = "ada@example.com", verified: Bool = true, aud: String = "app-client",
               nonce: String? = nil, exp: Int64? = nil) throws -> String {
        try idp.token(sub: sub, aud: aud, now: h.clock.unixSeconds(), email: email, verified: verified, nonce: nonce, exp: exp)
    }

    func signIn(_ token: String, provider: String = "google", nonce: String? = nil, idToken: String? = nil, allowMigration: Bool? = nil,
                displayName: String? = nil) throws -> LoginDescriptor {
        try h.service.providerSignIn.signIn(
            provider: provider, token: token, nonce: nonce, idToken: idToken, allowMigration: allowMigration, displayName: displayName)
    }

    func accountCount() -> Int { h.store.snapshot().accounts.count }

    @Test("no session: a new account with the provider's verified address; a fresh token later: the same uid")
    func createThenSignIn() throws {
        let login = try signIn(token(), displayName: "Ada")
        #expect(login.isNewUser && login.email == "ada@example.com" && !login.session.isAnonymous)
        let account = try #require(try h.account(login.uid))
        #expect(account.emailVerified && account.providers == [Provider(rawValue: "google")!] && account.displayName == "Ada")
        let again = try signIn(token())
        #expect(again.uid == login.uid && !again.isNewUser)
        #expect(h.store.snapshot().webhooks.map(\.eventType).filter { $0 != "user.signed_in" } == ["user.created", "user.provider_linked"])
    }

    @Test("a token is used once: the same token again is INVALID_PROVIDER_TOKEN and gives no session")
    func replay() throws {
        let once = try token()
        _ = try signIn(once)
        let sessions = h.store.snapshot().refreshTokens.count
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn(once) }
        #expect(h.store.snapshot().refreshTokens.count == sessions)
    }

    @Test("bad tokens (expired, another app's, wrong nonce, unknown provider) create nothing")
    func badTokens() throws {
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn(token(exp: h.clock.unixSeconds() - 120)) }
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn(token(aud: "another-app")) }
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn(token(nonce: "n-1"), nonce: "n-2") }
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn(token(nonce: "n-1")) }
        expectAuthError("INVALID_PROVIDER_TOKEN") { _ = try signIn("not.a.token") }
        expectAuthError("PROVIDER_NOT_CONFIGURED") { _ = try signIn(token(), provider: "facebook") }
        #expect(accountCount() == 0)
        // Apple's token carries the SHA-256 of the raw nonce the app sends.
        let raw = "raw-nonce-1"
        let hashed = ProviderTokenVerifier.expectedNonceClaim(raw, provider: try #require(h.service.identityProviders.provider(named: "apple")))
        #expect(try signIn(token("a-1", aud: "com.example.app", nonce: hashed), provider: "apple", nonce: raw).isNewUser)
        expectAuthError("INVALID_PROVIDER_TOKEN") {
            _ = try signIn(token("a-1", aud: "com.example.app", nonce: hashed), provider: "apple", nonce: hashed)
        }
    }

    @Test("an anonymous session and a free identity: upgraded in place, same uid, with the address")
    func anonymousUpgrade() throws {
        let guest = try h.service.sessions.signInAnonymously()
        let login = try signIn(token(), idToken: guest.idToken)
        #expect(login.uid == guest.uid && login.isNewUser && login.email == "ada@example.com")
        #expect(try h.account(guest.uid)?.isAnonymous == false)
    }

    @Test("an anonymous session and an identity another account holds: MIGRATION_REQUIRED uses nothing up, then the same token migrates")
    func migration() throws {
        let holder = try signIn(token())
        let guest = try h.service.sessions.signInAnonymously()
        let retry = try token()
        let error = expectAuthError("MIGRATION_REQUIRED") { _ = try signIn(retry, idToken: guest.idToken) }
        #expect(error?.details["anonymousUid"] == guest.uid)
        let login = try signIn(retry, idToken: guest.idToken, allowMigration: true)
        #expect(login.uid == holder.uid && login.migration?.fromUid == guest.uid && !login.isNewUser)
        #expect(try h.account(guest.uid) == nil)
    }

    @Test("a signed-in user links a free identity only with a recent sign-in; another account's identity is CREDENTIAL_ALREADY_IN_USE")
    func linkCases() throws {
        let ada = try h.signIn("ada@example.com")
        h.clock.advance(by: 301)
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try signIn(token("g-ada"), idToken: ada.session.idToken) }
        expectAuthError("REQUIRES_RECENT_LOGIN") {
            _ = try h.service.providerSignIn.link(idToken: ada.session.idToken, provider: "google", token: try token("g-ada"), nonce: nil)
        }
        let fresh = try h.signIn("ada@example.com")
        let linked = try signIn(token("g-ada"), idToken: fresh.session.idToken)
        #expect(linked.uid == ada.uid && linked.isNewUser)
        #expect(try h.account(ada.uid)?.providers.contains(Provider(rawValue: "google")!) == true)
        // A second Google identity for the same account.
        expectAuthError("PROVIDER_ALREADY_LINKED") {
            _ = try h.service.providerSignIn.link(idToken: fresh.session.idToken, provider: "google", token: try token("g-other", email: nil), nonce: nil)
        }
        let bob = try h.signIn("bob@example.com")
        expectAuthError("CREDENTIAL_ALREADY_IN_USE") { _ = try signIn(token("g-ada"), idToken: bob.session.idToken) }
        expectAuthError("CREDENTIAL_ALREADY_IN_USE") {
            _ = try h.service.providerSignIn.link(idToken: bob.session.idToken, provider: "google", token: try token("g-ada"), nonce: nil)
        }
        // The owner signing in with it again: a fresh session of the same account.
        #expect(try signIn(token("g-ada"), idToken: fresh.session.idToken).uid == ada.uid)
    }

    @Test("pre-hijacking: an unverified account of the address is never joined; a verified one is, only with a verified provider address")
    func preHijacking() throws {
        // The attacker's account holds the victim's address, unverified (an import, an operator's account).
        let trap = try h.signIn("victim@example.com")
        _ = try h.service.operators.updateUser(uid: trap.uid, disabled: nil, emailVerified: false, displayName: nil)
        let accounts = accountCount()
        expectAuthError("ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL") { _ = try signIn(token("g-victim", email: "victim@example.com")) }
        #expect(accountCount() == accounts && h.store.snapshot().providerIdentities.isEmpty)
        // A provider that did not verify the address joins nothing either, even a verified account.
        let owner = try h.signIn("carol@example.com")
        expectAuthError("ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL") {
            _ = try signIn(token("g-carol", email: "carol@example.com", verified: false))
        }
        // Both verified: the identity joins the account of the address.
        let joined = try signIn(token("g-carol", email: "carol@example.com"))
        #expect(joined.uid == owner.uid && !joined.isNewUser)
        // A signed-in account whose address nobody proved gains no identity.
        let trapSession = try h.service.sessions.signInAnonymously()
        _ = trapSession
        expectAuthError("ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL") {
            _ = try h.service.providerSignIn.link(idToken: trap.session.idToken, provider: "google", token: try token("g-attacker", email: nil), nonce: nil)
        }
    }

    @Test("the attacker's sign-up with the victim's address and a password, then the victim's Google sign-in: the password opens nothing")
    func attackerSignUpFirst() throws {
        _ = try h.service.passwords.signUp(email: "victim@example.com", password: "attacker-pass-1", idToken: nil, continueURL: nil, locale: nil)
        let victim = try signIn(token("g-victim", email: "victim@example.com"))
        #expect(victim.isNewUser)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "victim@example.com", password: "attacker-pass-1", idToken: nil, allowMigration: nil)
        }
    }

    @Test("a provider's unverified address is not given to a new account: it has none, and is not anonymous")
    func unverifiedAddress() throws {
        let login = try signIn(token("g-x", email: "x@example.com", verified: false))
        #expect(login.isNewUser && login.email == nil && !login.session.isAnonymous)
        #expect(try h.account(login.uid)?.isAnonymous == false)
    }

    @Test("unlink: never the last way in; otherwise the identity goes, the sessions stay, and it is free again")
    func unlink() throws {
        let only = try signIn(token("g-only", email: nil))
        expectAuthError("LAST_SIGN_IN_METHOD") { _ = try h.service.providerSignIn.unlink(idToken: only.session.idToken, provider: "google") }
        let ada = try h.signIn("ada@example.com")
        let viaGoogle = try signIn(token("g-ada"), idToken: ada.session.idToken)
        let fresh = try h.signIn("ada@example.com")
        expectAuthError("PROVIDER_NOT_LINKED") { _ = try h.service.providerSignIn.unlink(idToken: fresh.session.idToken, provider: "apple") }
        let user = try h.service.providerSignIn.unlink(idToken: fresh.session.idToken, provider: "google")
        #expect(!user.providers.contains("google"))
        // The session Google signed in is the holder's own and goes on; the identity is free again.
        #expect(throws: Never.self) { _ = try h.service.sessions.refresh(viaGoogle.session.refreshToken) }
        #expect(try signIn(token("g-ada")).uid == ada.uid)  // joins again by its verified address
        // Each link and unlink is in the account's activity, naming the provider (newest first).
        let latest = try h.signIn("ada@example.com")
        let kinds = try h.service.sessions.activity(idToken: latest.session.idToken, after: nil, limit: 100).entries
            .filter { $0.kind.hasPrefix("provider") }.map { "\($0.kind) \($0.method ?? "")" }
        #expect(kinds == ["providerLinked google", "providerUnlinked google", "providerLinked google"])
        let unlinked = try #require(h.store.snapshot().webhooks.first { $0.eventType == "user.provider_unlinked" })
        #expect(unlinked.body.contains(#""data":{"by":"owner","provider":"google","uid":"\#(ada.uid)"}"#))
    }

    /// Apple's notification about `sub`, signed by `signer` (the provider's key unless given).
    func appleNotification(_ type: String, sub: String, signer: RSASigningKey? = nil) throws -> String {
        let now = h.clock.unixSeconds()
        let events = String(decoding: try JSONSerialization.data(withJSONObject: ["type": type, "sub": sub, "event_time": now * 1000]), as: UTF8.self)
        let claims: [String: Any] = ["iss": TestIdentityProvider.issuer, "aud": "com.example.app", "iat": now, "jti": UUID().uuidString, "events": events]
        return try JSONWebToken.sign(claims: JSONSerialization.data(withJSONObject: claims), with: signer ?? idp.key)
    }

    @Test("Apple's notifications: consent revoked unlinks and ends Apple's sessions, keeping the account; forwarding off changes nothing; a forged one is refused")
    func appleNotifications() throws {
        let apple = try #require(h.service.identityProviders.provider(named: "apple"))
        let raw = "raw-nonce-2"
        let login = try signIn(
            token("a-9", email: "relay@privaterelay.appleid.com", aud: "com.example.app", nonce: ProviderTokenVerifier.expectedNonceClaim(raw, provider: apple)),
            provider: "apple", nonce: raw)
        expectAuthError("INVALID_PROVIDER_TOKEN") {
            _ = try h.service.providerSignIn.appleNotification(try appleNotification("consent-revoked", sub: "a-9", signer: try RSASigningKey(generatingWithID: "idp-1")))
        }
        #expect(try h.service.providerSignIn.appleNotification(try appleNotification("email-disabled", sub: "a-9")).kind == .emailDisabled)
        #expect(try h.account(login.uid)?.providers.contains(.identity(apple)) == true)
        _ = try h.service.providerSignIn.appleNotification(try appleNotification("consent-revoked", sub: "a-9"))
        let account = try #require(try h.account(login.uid))
        #expect(!account.providers.contains(.identity(apple)) && account.email?.address == "relay@privaterelay.appleid.com")
        #expect(h.store.snapshot().providerIdentities.isEmpty)
        #expect(try h.store.read { try $0.activity(uid: login.uid, after: nil, limit: 10) }.map(\.kind).first == "providerUnlinked")
        #expect(h.store.snapshot().webhooks.last { $0.eventType == "user.provider_unlinked" }?.body.contains(#""by":"provider""#) == true)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        // Again: nothing more to do.
        #expect(try h.service.providerSignIn.appleNotification(try appleNotification("account-delete", sub: "a-9")).kind == .accountDelete)
    }
}
