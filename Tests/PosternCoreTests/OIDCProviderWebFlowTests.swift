import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// "Continue with …" on the hosted page (issue 46 point 3): the code flow to the provider and back,
/// and the attacker's sequences against it.
@Suite("The hosted page's provider sign-in: PKCE, state and nonce bound to the browser")
struct OIDCProviderWebFlowTests {
    let o: OIDCHarness
    let idp: TestIdentityProvider

    init() throws {
        idp = try TestIdentityProvider()
        let providers = try IdentityProvider.parseList(Data("""
            [{"id": "acme", "issuer": "\(TestIdentityProvider.issuer)", "audiences": ["web-client"], "clientId": "web-client"}]
            """.utf8))
        o = try OIDCHarness(identityProviders: ProviderRegistry(providers: providers, clientSecrets: ["acme": TestIdentityProvider.clientSecret], http: idp))
    }

    /// The request's page, and the button pressed: the provider's authorization URL.
    func start(browser: String = OIDCHarness.browser) throws -> (pending: String, url: URLComponents) {
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: browser, session: nil) else {
            throw FlowHarness.HarnessError.noLink
        }
        guard case .redirect(let url) = try o.flow.startProvider(request: pending.id, browser: browser, provider: "acme"),
            let components = URLComponents(string: url)
        else { throw FlowHarness.HarnessError.noLink }
        return (pending.id, components)
    }

    func item(_ url: URLComponents, _ name: String) -> String? { url.queryItems?.first { $0.name == name }?.value }

    /// An ID token of the provider for the authorization URL's nonce (or `nonce`).
    func idToken(for url: URLComponents, sub: String = "acme-1", email: String = "ada@example.com", nonce: String? = nil) throws -> String {
        try idp.token(sub: sub, aud: TestIdentityProvider.clientID, now: o.h.clock.unixSeconds(), email: email, nonce: nonce ?? item(url, "nonce") ?? "")
    }

    @Test("the straight path: to the provider with PKCE S256, state and nonce; back, the client gets a code whose ID token says amr fed")
    func straightPath() throws {
        let (_, url) = try start()
        #expect(url.host == "idp.test" && url.path == "/authorize")
        #expect(item(url, "response_type") == "code" && item(url, "client_id") == "web-client" && item(url, "code_challenge_method") == "S256")
        #expect(item(url, "redirect_uri") == "https://auth.example.com/oidc/provider-callback")
        #expect(item(url, "scope")?.split(separator: " ").contains("openid") == true)
        let state = try #require(item(url, "state"))
        idp.willAnswer(code: "c-1", challenge: try #require(item(url, "code_challenge")), idToken: try idToken(for: url))
        let answer = try o.flow.finishProvider(state: state, code: "c-1", error: nil, browser: OIDCHarness.browser, session: nil)
        guard case .redirect(let back) = answer.outcome else { Issue.record("\(answer)"); return }
        #expect(back.hasPrefix("https://grafana.example.com/login/generic_oauth?") && answer.newSession != nil)
        let tokens = try o.exchange(try #require(OIDCHarness.query(back, "code")))
        guard case .string(let idToken)? = tokens["id_token"] else { Issue.record("no id_token"); return }
        let claims = try JSONSerialization.jsonObject(with: try JSONWebToken.parse(idToken).claims) as? [String: Any]
        #expect(claims?["amr"] as? [String] == ["fed"] && claims?["email"] as? String == "ada@example.com")
        let uid = try #require(claims?["sub"] as? String)
        #expect(try o.h.account(uid)?.providers.contains(Provider(rawValue: "oidc:acme")!) == true)
    }

    @Test("login CSRF: the attacker's callback opened in the victim's browser completes nothing and redeems nothing")
    func otherBrowser() throws {
        let (_, url) = try start(browser: OIDCHarness.otherBrowser)
        idp.willAnswer(code: "c-2", challenge: try #require(item(url, "code_challenge")), idToken: try idToken(for: url, sub: "attacker"))
        let answer = try o.flow.finishProvider(state: try #require(item(url, "state")), code: "c-2", error: nil, browser: OIDCHarness.browser, session: nil)
        #expect(answer.outcome == .refused(.otherBrowser) && answer.newSession == nil)
        #expect(idp.tokenRequests == 0 && o.h.store.snapshot().accounts.isEmpty)
    }

    @Test("a token with another nonce, a cancelled sign-in, a replayed callback: the sign-in page again, nothing made")
    func refusals() throws {
        let (_, url) = try start()
        let state = try #require(item(url, "state"))
        idp.willAnswer(code: "c-3", challenge: try #require(item(url, "code_challenge")), idToken: try idToken(for: url, nonce: "someone-elses"))
        guard case .signIn(_, .providerFailed?) = try o.flow.finishProvider(state: state, code: "c-3", error: nil, browser: OIDCHarness.browser, session: nil).outcome else {
            Issue.record("not refused"); return
        }
        guard case .signIn(_, .providerFailed?) = try o.flow.finishProvider(state: state, code: nil, error: "access_denied", browser: OIDCHarness.browser, session: nil).outcome else {
            Issue.record("not refused"); return
        }
        #expect(o.h.store.snapshot().accounts.isEmpty)
        // Completed once, the same callback again finds no request.
        idp.willAnswer(code: "c-4", challenge: try #require(item(url, "code_challenge")), idToken: try idToken(for: url))
        guard case .redirect = try o.flow.finishProvider(state: state, code: "c-4", error: nil, browser: OIDCHarness.browser, session: nil).outcome else {
            Issue.record("not signed in"); return
        }
        #expect(try o.flow.finishProvider(state: state, code: "c-4", error: nil, browser: OIDCHarness.browser, session: nil).outcome == .refused(.requestExpired))
    }

    @Test("pre-hijacking on the page: an unverified account of the address is not joined; the page says to sign in by address first")
    func accountExists() throws {
        let trap = try o.h.signIn("ada@example.com")
        _ = try o.h.service.operators.updateUser(uid: trap.uid, disabled: nil, emailVerified: false, displayName: nil)
        let (_, url) = try start()
        idp.willAnswer(code: "c-5", challenge: try #require(item(url, "code_challenge")), idToken: try idToken(for: url))
        guard case .signIn(_, .accountExists?) = try o.flow.finishProvider(
            state: try #require(item(url, "state")), code: "c-5", error: nil, browser: OIDCHarness.browser, session: nil).outcome
        else { Issue.record("not refused"); return }
        #expect(o.h.store.snapshot().providerIdentities.isEmpty)
    }

    @Test("Apple's first form_post names the person: the display name of an account without one, one line, never anything else")
    func appleName() throws {
        #expect(OIDCFlow.appleDisplayName(#"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"x@privaterelay.appleid.com"}"#) == "Ada Lovelace")
        #expect(OIDCFlow.appleDisplayName(#"{"name":{"firstName":"Ada\nEvil","lastName":""}}"#) == "AdaEvil")
        #expect(OIDCFlow.appleDisplayName(#"{"name":{"firstName":"Ada\u2028x"}}"#) == nil)
        #expect(OIDCFlow.appleDisplayName(#"{"email":"x@example.com"}"#) == nil)
        #expect(OIDCFlow.appleDisplayName("not json") == nil)
    }
}
