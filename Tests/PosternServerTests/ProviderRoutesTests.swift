import Foundation
import PosternCore
import PosternCrypto
@testable import PosternServer
import PosternTestSupport
import Testing

/// Sign in with a provider over HTTP (issue 46): the native routes' answers and log lines, and the
/// hosted page's "Continue with …" through its forms and Apple's form_post callback.
@Suite("Provider sign-in over HTTP")
struct ProviderRoutesTests {
    let idp: TestIdentityProvider
    let harness: RouterTests.Harness
    /// The router's clock (a ManualClock that nothing advances here).
    static let now: Int64 = 1_800_000_000

    init() throws {
        idp = try TestIdentityProvider()
        let issuer = TestIdentityProvider.issuer
        let providers = try IdentityProvider.parseList(Data("""
            [{"id": "google", "issuer": "\(issuer)", "jwksUri": "\(issuer)/jwks", "audiences": ["app-client"]},
             {"id": "acme", "issuer": "\(issuer)", "audiences": ["web-client"], "clientId": "web-client"}]
            """.utf8))
        let registry = ProviderRegistry(providers: providers, clientSecrets: ["acme": TestIdentityProvider.clientSecret], http: idp)
        harness = try RouterTests.harnessWithService(identityProviders: registry) { settings in settings.publicURL = "https://auth.example.com" }
    }

    func token(_ sub: String, email: String? = "ada@example.com") throws -> String {
        try idp.token(sub: sub, aud: "app-client", now: Self.now, email: email)
    }

    func post(_ path: String, _ body: [String: Any], bearer: String? = nil) throws -> HTTPResponse {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        return harness.router.handle(RouterTests.request("POST", path, body: text, bearer: bearer))
    }

    @Test("sign-in: 200 Login; the same token again 400 INVALID_PROVIDER_TOKEN, its reason in the log and the token nowhere in it")
    func signInAndReplay() throws {
        let once = try token("g-1")
        let first = try post("/v1/provider/sign-in", ["provider": "google", "providerIdToken": once])
        #expect(first.status == 200)
        let login = RouterTests.json(first)
        #expect(login["isNewUser"] as? Bool == true && login["email"] as? String == "ada@example.com")
        let again = try post("/v1/provider/sign-in", ["provider": "google", "providerIdToken": once])
        #expect(again.status == 400 && (RouterTests.json(again)["error"] as? [String: Any])?["code"] as? String == "INVALID_PROVIDER_TOKEN")
        let log = harness.log().joined(separator: "\n")
        #expect(log.contains("google: replayed") && !log.contains(once) && !log.contains(once.split(separator: ".")[2]))
        let unknown = try post("/v1/provider/sign-in", ["provider": "facebook", "providerIdToken": once])
        #expect(unknown.status == 404)
    }

    @Test("link needs a recent session; unlink refuses the last way in and names PROVIDER_NOT_LINKED")
    func linkAndUnlink() throws {
        let only = RouterTests.json(try post("/v1/provider/sign-in", ["provider": "google", "providerIdToken": try token("g-2", email: nil)]))
        let idToken = try #require((only["session"] as? [String: Any])?["idToken"] as? String)
        let last = harness.router.handle(RouterTests.request("DELETE", "/v1/me/providers/google", bearer: idToken))
        #expect(last.status == 409 && (RouterTests.json(last)["error"] as? [String: Any])?["code"] as? String == "LAST_SIGN_IN_METHOD")
        let none = harness.router.handle(RouterTests.request("DELETE", "/v1/me/providers/oidc%3Aacme", bearer: idToken))
        #expect(none.status == 404 && (RouterTests.json(none)["error"] as? [String: Any])?["code"] as? String == "PROVIDER_NOT_LINKED")
        let linked = try post("/v1/me/providers", ["provider": "google", "providerIdToken": try token("g-3")], bearer: idToken)
        #expect(linked.status == 409)  // the account holds a Google identity already
    }

    @Test("the hosted page: a Continue button per web provider, a redirect to the provider, Apple's form_post turned into a GET, back to the client")
    func hostedPage() throws {
        let browser = OIDCPagesTests.Browser(harness.router)
        let client = OIDCClient(
            clientID: "rp", name: "RP", authentication: .secretHash(SHA256.hash(Array(OIDCPagesTests.secret.utf8))),
            redirectURIs: [OIDCPagesTests.redirect], scopes: OIDCClient.knownScopes, firstParty: true)
        try harness.store.write { tx in try tx.insertOIDCClient(client) }
        let page = browser.send("GET", "/oidc/authorize", query: [
            "response_type": "code", "client_id": "rp", "redirect_uri": OIDCPagesTests.redirect, "scope": "openid email", "state": "s1",
            "code_challenge": Base64URL.encode(SHA256.hash(Array(OIDCPagesTests.verifier.utf8))), "code_challenge_method": "S256",
        ])
        let html = OIDCPagesTests.html(page)
        #expect(html.contains(#"value="acme""#) && html.contains("Continue with acme") && !html.contains(#"value="google""#))
        let request = try #require(OIDCPagesTests.field("request", in: page))
        let csrf = try #require(OIDCPagesTests.field("csrf", in: page))
        #expect(browser.send("POST", "/oidc/provider-start", form: ["request": request, "csrf": "wrong", "provider": "acme"]).status == 403)
        let start = browser.send("POST", "/oidc/provider-start", form: ["request": request, "csrf": csrf, "provider": "acme"])
        #expect(start.status == 302)
        let location = try #require(RouterTests.header(start, "Location"))
        #expect(location.hasPrefix(TestIdentityProvider.issuer + "/authorize?"))
        let state = try #require(OIDCPagesTests.query(location, "state"))
        let nonce = try #require(OIDCPagesTests.query(location, "nonce"))
        idp.willAnswer(
            code: "code+/=1", challenge: try #require(OIDCPagesTests.query(location, "code_challenge")),
            idToken: try idp.token(sub: "acme-7", aud: "web-client", now: Self.now, email: "ada@example.com", nonce: nonce))
        // Apple's form_post: the browser posts cross-site without its SameSite=Lax cookie; the 303 brings it back as a GET.
        let posted = harness.router.handle(HTTPRequest(
            method: "POST", path: "/oidc/provider-callback", query: [:], headers: ["content-type": "application/x-www-form-urlencoded"],
            body: Array("state=\(OIDCPagesTests.encoded(state))&code=\(OIDCPagesTests.encoded("code+/=1"))".utf8), clientIP: "192.0.2.7"))
        #expect(posted.status == 303)
        let backLocation = try #require(RouterTests.header(posted, "Location"))
        let back = try #require(URLComponents(string: backLocation))
        #expect(back.path == "/oidc/provider-callback")
        let query = Dictionary(uniqueKeysWithValues: (back.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["state"] == state && query["code"] == "code+/=1")
        let done = browser.send("GET", "/oidc/provider-callback", query: query)
        #expect(done.status == 302 && RouterTests.header(done, "Location")?.hasPrefix(OIDCPagesTests.redirect + "?code=") == true)
        #expect(idp.tokenRequests == 1)
    }
}
