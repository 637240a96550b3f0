import Foundation
import PosternCore
import PosternCrypto
@testable import PosternServer
import Synchronization
import Testing

/// The OpenID Connect provider through the router, as a browser and a relying party meet it: the
/// hosted page's forms, its cookies and headers, the action page's continue button, and the
/// attacker's sequences that live in HTTP (CSRF, clickjacking, a scanner with its own cookies,
/// redirects an unknown client asks for).
@Suite("OIDC over HTTP")
struct OIDCPagesTests {
    static let secret = "client-secret-for-the-http-tests-0123456789abc"
    static let redirect = "https://rp.example.com/cb"
    static let verifier = "verifier-of-the-http-tests-0123456789-0123456789"

    /// A browser: its cookies, kept across requests as a browser keeps them.
    final class Browser: Sendable {
        let router: APIRouter
        private let jar = Mutex<[String: String]>([:])
        init(_ router: APIRouter) { self.router = router }

        var cookies: [String: String] { jar.withLock { $0 } }

        func send(_ method: String, _ path: String, query: [String: String] = [:], form: [String: String]? = nil) -> HTTPResponse {
            var headers: [String: String] = [:]
            let cookie = jar.withLock { $0.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
            if !cookie.isEmpty { headers["cookie"] = cookie }
            var body: [UInt8] = []
            if let form {
                headers["content-type"] = "application/x-www-form-urlencoded"
                body = Array(form.sorted { $0.key < $1.key }.map { "\($0.key)=\(OIDCPagesTests.encoded($0.value))" }.joined(separator: "&").utf8)
            }
            let response = router.handle(HTTPRequest(method: method, path: path, query: query, headers: headers, body: body, clientIP: "192.0.2.7"))
            for (name, value) in response.headers where name.lowercased() == "set-cookie" {
                let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                jar.withLock { $0[String(pair[0])] = pair.count > 1 && !pair[1].isEmpty ? String(pair[1]) : nil }
            }
            return response
        }
    }

    static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    static func html(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// The hidden or prefilled `value` of the field `name` on a page.
    static func field(_ name: String, in response: HTTPResponse) -> String? {
        let html = html(response)
        guard let start = html.range(of: #"name="\#(name)""#) else { return nil }
        let tail = html[start.upperBound...]
        guard let value = tail.range(of: #"value=""#), tail[..<value.lowerBound].contains(">") == false else { return nil }
        return tail[value.upperBound...].split(separator: "\"", maxSplits: 1).first.map { String($0).replacingOccurrences(of: "&amp;", with: "&") }
    }

    static func query(_ url: String?, _ name: String) -> String? {
        url.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == name }?.value }
    }

    struct Provider {
        let harness: RouterTests.Harness
        var router: APIRouter { harness.router }

        init(
            firstParty: Bool = true, ipPerMinute: Int64 = 0, challengeHTTP: (any ProviderHTTP)? = nil, configure: (inout Settings) -> Void = { _ in }
        ) throws {
            harness = try RouterTests.harnessWithService(ipPerMinute: ipPerMinute, challengeHTTP: challengeHTTP) { settings in
                settings.publicURL = "https://auth.example.com"
                configure(&settings)
            }
            let client = OIDCClient(
                clientID: "rp", name: "Relying <Party>", authentication: .secretHash(SHA256.hash(Array(OIDCPagesTests.secret.utf8))),
                redirectURIs: [OIDCPagesTests.redirect], postLogoutRedirectURIs: ["https://rp.example.com/bye"],
                scopes: OIDCClient.knownScopes, firstParty: firstParty)
            try harness.store.write { tx in try tx.insertOIDCClient(client) }
        }

        var authorizeQuery: [String: String] {
            [
                "response_type": "code", "client_id": "rp", "redirect_uri": OIDCPagesTests.redirect, "scope": "openid email", "state": "s1",
                "nonce": "n1", "code_challenge": Base64URL.encode(SHA256.hash(Array(OIDCPagesTests.verifier.utf8))), "code_challenge_method": "S256",
            ]
        }

        /// The newest mail's link and 6-digit code.
        func lastMail() throws -> (oobCode: String, code: String) {
            let queued = try #require(harness.store.queuedMail().last)
            let composed = try #require(try harness.service.mailComposer.compose(queued.intent, recipient: queued.recipient))
            guard case .signIn(let link, let code, _) = composed.message.content else { throw FlowFailure.noMail }
            return (try #require(OIDCPagesTests.query(link, "oobCode")), code)
        }

        /// Sign-in page → address → the link opened in `browser` → its button: the final answer.
        func signIn(_ browser: Browser, email: String = "ada@example.com") throws -> HTTPResponse {
            let page = browser.send("GET", "/oidc/authorize", query: authorizeQuery)
            let request = try #require(OIDCPagesTests.field("request", in: page))
            let csrf = try #require(OIDCPagesTests.field("csrf", in: page))
            let sent = browser.send("POST", "/oidc/sign-in", form: ["request": request, "csrf": csrf, "email": email])
            #expect(sent.status == 200)
            let link = browser.send("GET", "/action", query: ["mode": "signIn", "oobCode": try lastMail().oobCode])
            #expect(OIDCPagesTests.html(link).contains(#"action="/oidc/resume""#))
            return browser.send("POST", "/oidc/resume", form: [
                "request": try #require(OIDCPagesTests.field("request", in: link)), "csrf": try #require(OIDCPagesTests.field("csrf", in: link)),
                "oobCode": try #require(OIDCPagesTests.field("oobCode", in: link)),
            ])
        }
    }

    enum FlowFailure: Error { case noMail }

    @Test("authorize → address → the mail's link in the same browser → 302 with code, state, iss; the session cookie; tokens; a second authorize without mail")
    func straightPath() throws {
        let provider = try Provider()
        let browser = Browser(provider.router)
        let first = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        #expect(first.status == 200)
        #expect(browser.cookies["postern_browser"] != nil)
        #expect(OIDCPagesTests.html(first).contains(#"autocomplete="username""#))
        let done = try provider.signIn(browser)
        #expect(done.status == 302)
        let location = RouterTests.header(done, "Location")
        #expect(location?.hasPrefix(Self.redirect + "?code=") == true)
        #expect(Self.query(location, "state") == "s1" && Self.query(location, "iss") == "https://auth.example.com")
        let session = try #require(done.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix("__Host-postern_session=") }?.1)
        #expect(session.contains("HttpOnly") && session.contains("Secure") && session.contains("SameSite=Lax") && session.contains("Path=/"))

        let token = provider.router.handle(RouterTests.request(
            "POST", "/oidc/token",
            body: "grant_type=authorization_code&code=\(Self.query(location, "code") ?? "")&redirect_uri=\(Self.encoded(Self.redirect))&code_verifier=\(Self.verifier)&client_id=rp&client_secret=\(Self.secret)",
            contentType: "application/x-www-form-urlencoded"))
        #expect(token.status == 200 && RouterTests.header(token, "Cache-Control") == "no-store")
        let tokens = RouterTests.json(token)
        #expect(tokens["id_token"] is String && tokens["access_token"] is String)
        let userinfo = provider.router.handle(RouterTests.request("GET", "/oidc/userinfo", bearer: tokens["access_token"] as? String))
        #expect(RouterTests.json(userinfo)["email"] as? String == "ada@example.com")

        let mails = provider.harness.store.queuedMail().count
        let again = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        #expect(again.status == 302 && Self.query(RouterTests.header(again, "Location"), "code") != nil)
        #expect(provider.harness.store.queuedMail().count == mails, "no mail for a live session")
    }

    @Test("the check-mail page is the same, byte for byte but the address, for an account and for no account")
    func enumeration() throws {
        let provider = try Provider()
        _ = try provider.signIn(Browser(provider.router), email: "known@example.com")
        var pages: [String] = []
        for address in ["known@example.com", "nobody@example.com"] {
            let browser = Browser(provider.router)
            let page = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
            let sent = browser.send("POST", "/oidc/sign-in", form: [
                "request": try #require(Self.field("request", in: page)), "csrf": try #require(Self.field("csrf", in: page)), "email": address,
            ])
            #expect(sent.status == 200)
            // The request id and the form's token are this browser's own; the address is what was typed.
            var html = Self.html(sent).replacingOccurrences(of: address, with: "ADDRESS")
            for name in ["request", "csrf"] { html = html.replacingOccurrences(of: Self.field(name, in: sent) ?? "-", with: name.uppercased()) }
            pages.append(html)
        }
        #expect(pages[0] == pages[1])
        #expect(provider.harness.store.queuedMail().count == 3, "a mail for each, the known address's and the unknown's")
    }

    @Test("the per-IP limit: authorize GETs past it are a 429 page with Retry-After, and the address form then sends no mail")
    func perIPLimit() throws {
        let provider = try Provider(ipPerMinute: 2)
        let browser = Browser(provider.router)
        let page = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        #expect(page.status == 200)
        let request = try #require(Self.field("request", in: page))
        let csrf = try #require(Self.field("csrf", in: page))
        var limited: HTTPResponse?
        for _ in 0..<5 {
            let again = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
            if again.status == 429 { limited = again; break }
        }
        let refused = try #require(limited, "the limit never answered")
        #expect(RouterTests.header(refused, "Retry-After") != nil && RouterTests.header(refused, "Location") == nil)
        let sent = browser.send("POST", "/oidc/sign-in", form: ["request": request, "csrf": csrf, "email": "ada@example.com"])
        #expect(sent.status == 429)
        #expect(provider.harness.store.queuedMail().isEmpty, "no mail past the limit")
    }

    @Test("discovery names the issuer and the endpoints under it")
    func discovery() throws {
        let provider = try Provider()
        let answer = provider.router.handle(RouterTests.request("GET", "/.well-known/openid-configuration"))
        let document = RouterTests.json(answer)
        #expect(document["issuer"] as? String == "https://auth.example.com")
        #expect(document["token_endpoint"] as? String == "https://auth.example.com/oidc/token")
        #expect(document["authorization_response_iss_parameter_supported"] as? Bool == true)
        #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
    }

    @Test("CSRF: a form without its token, or with another browser's, is 403 and sends no mail")
    func csrf() throws {
        let provider = try Provider()
        let victim = Browser(provider.router)
        let page = victim.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        let request = try #require(Self.field("request", in: page))
        let attacker = Browser(provider.router)
        let attackersPage = attacker.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        let attackersToken = try #require(Self.field("csrf", in: attackersPage))
        for form in [["request": request, "email": "mallory@example.com"], ["request": request, "csrf": attackersToken, "email": "mallory@example.com"]] {
            let answer = victim.send("POST", "/oidc/sign-in", form: form)
            #expect(answer.status == 403)
        }
        #expect(provider.harness.store.queuedMail().isEmpty)
        // The consent form too.
        let consent = victim.send("POST", "/oidc/consent", form: ["request": request, "csrf": attackersToken, "decision": "allow"])
        #expect(consent.status == 403 && RouterTests.header(consent, "Location") == nil)
    }

    @Test("a scanner with its own cookies opens the link and posts every form it can: nothing completes, nothing is burnt")
    func scanner() throws {
        let provider = try Provider()
        let person = Browser(provider.router)
        let page = person.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        _ = person.send("POST", "/oidc/sign-in", form: [
            "request": try #require(Self.field("request", in: page)), "csrf": try #require(Self.field("csrf", in: page)), "email": "ada@example.com",
        ])
        let oobCode = try provider.lastMail().oobCode
        let scanner = Browser(provider.router)
        let opened = scanner.send("GET", "/action", query: ["mode": "signIn", "oobCode": oobCode])
        #expect(opened.status == 400 && !Self.html(opened).contains("/oidc/resume"))
        // It makes up the form it did not get, with a token for its own cookie.
        let own = scanner.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        let forged = scanner.send("POST", "/oidc/resume", form: [
            "request": try #require(Self.field("request", in: page)), "csrf": try #require(Self.field("csrf", in: own)), "oobCode": oobCode,
        ])
        #expect(forged.status != 302)
        #expect(scanner.cookies.keys.contains { $0.contains("postern_session") } == false)
        let withOwnRequest = scanner.send("POST", "/oidc/resume", form: [
            "request": try #require(Self.field("request", in: own)), "csrf": try #require(Self.field("csrf", in: own)), "oobCode": oobCode,
        ])
        #expect(withOwnRequest.status == 400 && RouterTests.header(withOwnRequest, "Location") == nil)
        // The person's browser still finishes.
        let link = person.send("GET", "/action", query: ["mode": "signIn", "oobCode": oobCode])
        let done = person.send("POST", "/oidc/resume", form: [
            "request": try #require(Self.field("request", in: link)), "csrf": try #require(Self.field("csrf", in: link)), "oobCode": oobCode,
        ])
        #expect(done.status == 302)
    }

    @Test("clickjacking: every provider page forbids framing and inline script")
    func clickjacking() throws {
        let provider = try Provider(firstParty: false)
        let browser = Browser(provider.router)
        let pages = [
            browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery),
            browser.send("GET", "/oidc/authorize", query: ["client_id": "nobody"]),
            browser.send("GET", "/oidc/logout"),
            try provider.signIn(browser),
        ]
        for page in pages {
            #expect(RouterTests.header(page, "X-Frame-Options") == "DENY")
            #expect(RouterTests.header(page, "Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
        }
        #expect(Self.html(pages[3]).contains("Relying &lt;Party&gt;"), "the consent page, the client's name escaped")
    }

    @Test("an unknown client or an unregistered redirect URI is a page on Postern's origin, never a redirect")
    func noOpenRedirect() throws {
        let provider = try Provider()
        let browser = Browser(provider.router)
        var query = provider.authorizeQuery
        query["redirect_uri"] = "https://evil.example/cb"
        for asked in [query, provider.authorizeQuery.merging(["client_id": "nobody"]) { $1 }] {
            let answer = browser.send("GET", "/oidc/authorize", query: asked)
            #expect(answer.status == 400 && RouterTests.header(answer, "Location") == nil)
        }
        let logout = browser.send("GET", "/oidc/logout", query: ["client_id": "rp", "post_logout_redirect_uri": "https://evil.example/"])
        #expect(logout.status == 200 && RouterTests.header(logout, "Location") == nil)
    }

    @Test("the token endpoint: OAuth's errors, invalid_client with WWW-Authenticate after Basic; no secret echoed or logged")
    func tokenErrors() throws {
        let provider = try Provider()
        let wrong = "wrong-secret-that-must-not-be-echoed"
        let basic = RouterTests.request("POST", "/oidc/token", body: "grant_type=authorization_code&code=x&redirect_uri=x", contentType: "application/x-www-form-urlencoded")
        let withHeader = HTTPRequest(
            method: "POST", path: "/oidc/token", query: [:],
            headers: basic.headers.merging(["authorization": "Basic " + Data("rp:\(wrong)".utf8).base64EncodedString()]) { $1 }, body: basic.body,
            clientIP: basic.clientIP)
        let answer = provider.router.handle(withHeader)
        #expect(answer.status == 401 && RouterTests.json(answer)["error"] as? String == "invalid_client")
        #expect(RouterTests.header(answer, "WWW-Authenticate")?.hasPrefix("Basic") == true)
        #expect(!Self.html(answer).contains(wrong))
        let unknown = provider.router.handle(RouterTests.request(
            "POST", "/oidc/token", body: "grant_type=authorization_code&code=nothing&redirect_uri=x&client_id=rp&client_secret=\(Self.secret)",
            contentType: "application/x-www-form-urlencoded"))
        #expect(unknown.status == 400 && RouterTests.json(unknown)["error"] as? String == "invalid_grant")
        #expect(!provider.harness.log().contains { $0.contains(Self.secret) || $0.contains(wrong) })
    }

    @Test("approve on another device: the number here, the link reviewed and the number typed there, Continue here → 302 with a code (amr approval)")
    func approveOnAnotherDevice() throws {
        let provider = try Provider()
        let person = Browser(provider.router)
        let page = person.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        #expect(Self.html(page).contains(#"formaction="/oidc/approve""#))
        let request = try #require(Self.field("request", in: page))
        let csrf = try #require(Self.field("csrf", in: page))
        let asked = person.send("POST", "/oidc/approve", form: ["request": request, "csrf": csrf, "email": "ada@example.com"])
        #expect(asked.status == 200)
        #expect(Self.html(asked).contains(#"action="/oidc/approved""#))
        let number = try #require(Self.field("number", in: asked))
        #expect(Self.html(asked).contains(#"<strong id="number" class="code">\#(number)</strong>"#))
        let continueForm = [
            "request": try #require(Self.field("request", in: asked)), "csrf": try #require(Self.field("csrf", in: asked)),
            "email": try #require(Self.field("email", in: asked)), "number": number,
        ]
        // Continue before the number was typed there: the page again, saying so.
        let early = person.send("POST", "/oidc/approved", form: continueForm)
        #expect(early.status == 200 && RouterTests.header(early, "Location") == nil)
        #expect(Self.html(early).contains(#"id="retry""#) && Self.field("number", in: early) == number)

        // Another browser with the person's request and a token of its own: refused, nothing taken.
        let stranger = Browser(provider.router)
        let strangers = stranger.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        let forged = stranger.send("POST", "/oidc/approved", form: continueForm.merging(["csrf": try #require(Self.field("csrf", in: strangers))]) { $1 })
        #expect(forged.status == 403 && RouterTests.header(forged, "Location") == nil)

        // The other device: the link's page, its review button, the number typed.
        let phone = Browser(provider.router)
        let oobCode = try provider.lastMail().oobCode
        let opened = phone.send("GET", "/action", query: ["mode": "signIn", "oobCode": oobCode])
        #expect(opened.status == 200 && !Self.html(opened).contains("/oidc/"))
        let phoneCSRF = try #require(Self.field("csrf", in: opened))
        let review = phone.send("POST", "/action", form: ["mode": "signIn", "oobCode": oobCode, "csrf": phoneCSRF, "step": "review"])
        #expect(review.status == 200 && Self.html(review).contains(#"name="pick""#))
        let picked = phone.send("POST", "/action", form: ["mode": "signIn", "oobCode": oobCode, "csrf": phoneCSRF, "pick": number])
        #expect(picked.status == 200)
        #expect(phone.cookies.keys.contains { $0.contains("postern_session") } == false, "the other device is not signed in")

        // The stranger's own request with the person's address: not its approval.
        let own = stranger.send("POST", "/oidc/approved", form: [
            "request": try #require(Self.field("request", in: strangers)), "csrf": try #require(Self.field("csrf", in: strangers)),
            "email": "ada@example.com", "number": number,
        ])
        #expect(own.status == 400 && RouterTests.header(own, "Location") == nil)

        let done = person.send("POST", "/oidc/approved", form: continueForm)
        #expect(done.status == 302)
        let location = RouterTests.header(done, "Location")
        #expect(location?.hasPrefix(Self.redirect + "?code=") == true && Self.query(location, "state") == "s1")
        #expect(done.headers.contains { $0.0 == "Set-Cookie" && $0.1.hasPrefix("__Host-postern_session=") })
        let token = provider.router.handle(RouterTests.request(
            "POST", "/oidc/token",
            body: "grant_type=authorization_code&code=\(Self.query(location, "code") ?? "")&redirect_uri=\(Self.encoded(Self.redirect))&code_verifier=\(Self.verifier)&client_id=rp&client_secret=\(Self.secret)",
            contentType: "application/x-www-form-urlencoded"))
        let idToken = try #require(RouterTests.json(token)["id_token"] as? String)
        let claims = try #require(try JSONSerialization.jsonObject(with: JSONWebToken.parse(idToken).claims) as? [String: Any])
        #expect(claims["amr"] as? [String] == ["approval"])
    }

    @Test("approve: a number that is not two digits is the form's refusal, not the page again")
    func approvedNumberChecked() throws {
        let provider = try Provider()
        let person = Browser(provider.router)
        let page = person.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        let form = ["request": try #require(Self.field("request", in: page)), "csrf": try #require(Self.field("csrf", in: page)), "email": "ada@example.com"]
        let asked = person.send("POST", "/oidc/approve", form: form)
        let number = try #require(Self.field("number", in: asked))
        // A live approval, not given yet: its own number shows the page again (200), any other is refused.
        for bad in ["", "7", "100", "x1", "-1"] {
            let answer = person.send("POST", "/oidc/approved", form: form.merging(["number": bad]) { $1 })
            #expect(answer.status == 400 && RouterTests.header(answer, "Location") == nil, "\(bad)")
            #expect(Self.field("number", in: answer) == nil, "\(bad)")
        }
        #expect(person.send("POST", "/oidc/approved", form: form.merging(["number": number]) { $1 }).status == 200)
    }
}
