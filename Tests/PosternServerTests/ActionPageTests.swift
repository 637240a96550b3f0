import Foundation
import PosternCore
@testable import PosternServer
import Testing

/// The hosted action page through the router, rendered from the bundled templates: GET and HEAD
/// never consume a link, the form needs the browser's CSRF cookie, each mode shows its page, the
/// app name is escaped, and a German page says everything in German, its errors included.
@Suite("Hosted action page")
struct ActionPageTests {
    struct Page {
        let router: APIRouter
        let service: AuthService

        init(appName: String = "Postern", supportEmail: String? = nil, ipPerMinute: Int64 = 0) throws {
            let harness = try RouterTests.harnessWithService(ipPerMinute: ipPerMinute) { settings in
                settings.appName = appName
                settings.supportEmail = supportEmail
                settings.allowedContinueHosts = ["app.example.com"]
            }
            router = harness.router
            service = harness.service
        }

        /// A link for an account at `email`, made as an operator would (the account is created by signing in first).
        func link(_ action: String, email: String, continueURL: String? = nil) throws -> IssuedLink {
            if action != "sign-in" {
                let signIn = try service.operators.issueLink(action: "sign-in", email: email, continueURL: nil, locale: nil, queue: false)
                _ = try service.emailLink.complete(EmailLinkCompletion(oobCode: signIn.oobCode))
            }
            return try service.operators.issueLink(action: action, email: email, continueURL: continueURL, locale: nil, queue: false)
        }

        func get(_ oobCode: String, lang: String? = nil, method: String = "GET", cookie: String? = nil) -> HTTPResponse {
            var query = ["oobCode": oobCode]
            query["lang"] = lang
            var request = RouterTests.request(method, "/action", query: query)
            if let cookie {
                request = HTTPRequest(
                    method: request.method, path: request.path, query: request.query,
                    headers: request.headers.merging(["cookie": "postern_csrf=\(cookie)"]) { $1 }, body: request.body, clientIP: request.clientIP)
            }
            return router.handle(request)
        }

        func post(_ fields: [String: String], cookie: String?) -> HTTPResponse {
            let body = fields.sorted { $0.key < $1.key }.map { key, value in
                "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
            }.joined(separator: "&")
            var request = RouterTests.request("POST", "/action", body: body, contentType: "application/x-www-form-urlencoded")
            if let cookie {
                request = HTTPRequest(
                    method: request.method, path: request.path, query: [:],
                    headers: request.headers.merging(["cookie": "postern_csrf=\(cookie)"]) { $1 }, body: request.body, clientIP: request.clientIP)
            }
            return router.handle(request)
        }
    }

    static func html(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    static func cookie(_ response: HTTPResponse) -> String? {
        guard let header = RouterTests.header(response, "Set-Cookie"), header.hasPrefix("postern_csrf=") else { return nil }
        return header.dropFirst("postern_csrf=".count).split(separator: ";").first.map(String.init)
    }

    static func field(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: #"name="\#(name)" value=""#) else { return nil }
        return html[range.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
    }

    @Test("a reset link's page: the new-password form on GET, nothing on HEAD, and neither consumes the link")
    func resetPageDoesNotConsume() throws {
        let page = try Page()
        let link = try page.link("reset-password", email: "reset@example.com")
        let head = page.get(link.oobCode, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        for _ in 0..<2 {
            let answer = page.get(link.oobCode)
            let html = Self.html(answer)
            #expect(answer.status == 200 && RouterTests.header(answer, "Content-Type") == "text/html; charset=utf-8")
            #expect(html.contains(#"<input id="newPassword" name="newPassword" type="password""#) && html.contains(#"<form method="post" action="/action">"#))
            #expect(Self.field("csrf", in: html)?.isEmpty == false && Self.field("oobCode", in: html) == link.oobCode)
            #expect(RouterTests.header(answer, "Content-Security-Policy")?.contains("default-src 'none'") == true)
        }
        #expect(try page.service.addresses.inspect(link: nil, oobCode: link.oobCode).mode == .resetPassword, "still unused")
    }

    @Test("the form works only with the cookie of the browser it was shown to; then the done page")
    func formNeedsItsCookie() throws {
        let page = try Page()
        let link = try page.link("reset-password", email: "form@example.com")
        let shown = page.get(link.oobCode)
        let csrf = try #require(Self.field("csrf", in: Self.html(shown)))
        let fields = ["mode": "resetPassword", "oobCode": link.oobCode, "csrf": csrf, "lang": "en", "newPassword": "a fine new password"]
        let forged = page.post(fields, cookie: nil)
        #expect(forged.status == 403 && Self.html(forged).contains("The form expired or was sent from another page."))
        let otherBrowser = page.post(fields, cookie: "AAAAAAAAAAAAAAAAAAAAAAAA")
        #expect(otherBrowser.status == 403)
        let done = page.post(fields, cookie: Self.cookie(shown))
        #expect(done.status == 200 && Self.html(done).contains(#"<p id="done">Your password has been changed."#))
        let again = page.get(link.oobCode)
        #expect(again.status == 400 && Self.html(again).contains(#"<p id="error">This link was already used."#))
    }

    @Test("verify and recover links show the address and a confirm button")
    func confirmPages() throws {
        let page = try Page()
        let link = try page.link("verify-email", email: "verify@example.com")
        let html = Self.html(page.get(link.oobCode))
        #expect(html.contains("<p>Confirm that <strong>verify@example.com</strong> is your address.</p>"))
        #expect(html.contains(#"<button type="submit" id="submit">Confirm</button>"#) && !html.contains("newPassword"))
    }

    @Test("a confirm form goes only with the number its page showed that browser: submitted as found, it changes and spends nothing")
    func confirmNeedsTheTypedNumber() throws {
        let page = try Page()
        let link = try page.link("verify-email", email: "typed@example.com")
        let shown = page.get(link.oobCode)
        let html = Self.html(shown)
        let csrf = try #require(Self.field("csrf", in: html))
        let cookie = try #require(Self.cookie(shown))
        let number = try #require(html.range(of: #"id="confirm-number">"#).map { String(html[$0.upperBound...].prefix(3)) })
        #expect(number.count == 3 && Int(number).map { (100...999).contains($0) } == true)
        #expect(!html.contains(#"value="\#(number)""#), "the number is never a value the form sends by itself")
        // The same browser sees the same number again.
        #expect(Self.html(page.get(link.oobCode, cookie: cookie)).contains(">\(number)</strong>"))
        let fields = ["mode": "verifyEmail", "oobCode": link.oobCode, "csrf": csrf, "lang": "en"]
        let wrong = number == "100" ? "101" : "100"
        for typed in [nil, "", wrong, "\(number)0", "abc"] {
            var sent = fields
            sent["confirm"] = typed
            let answer = page.post(sent, cookie: cookie)
            #expect(answer.status == 400 && Self.html(answer).contains(#"<p id="retry">"#), "\(typed ?? "nil")")
        }
        #expect(try page.service.addresses.inspect(link: nil, oobCode: link.oobCode).mode == .verifyEmail, "still unused")
        let done = page.post(fields.merging(["confirm": " \(number) "]) { $1 }, cookie: cookie)
        #expect(done.status == 200 && Self.html(done).contains(#"<p id="done">"#))
    }

    @Test("a sign-in link's page: the continue button carries the code to the app, and the 6-digit code is shown")
    func signInPage() throws {
        let page = try Page()
        let link = try page.link("sign-in", email: "sign@example.com", continueURL: "https://app.example.com/finish")
        let html = Self.html(page.get(link.oobCode, lang: "de"))
        let code = try #require(page.service.ledger.sixDigitCode(forSignInCode: link.oobCode))
        #expect(html.contains(#"<p class="code" id="code">\#(code)</p>"#))
        let continueLink = try #require(html.range(of: #"id="continue" href=""#).map { html[$0.upperBound...].prefix { $0 != "\"" } })
        let target = try #require(URLComponents(string: String(continueLink).replacingOccurrences(of: "&amp;", with: "&")))
        #expect(target.host == "app.example.com" && target.path == "/finish")
        #expect(Set(target.queryItems ?? []) == [URLQueryItem(name: "mode", value: "signIn"), URLQueryItem(name: "oobCode", value: link.oobCode), URLQueryItem(name: "lang", value: "de")])
        #expect(html.contains(">Weiter zur App</a>"))
        #expect(try page.service.addresses.inspect(link: nil, oobCode: link.oobCode).mode == .signIn, "still unused")
    }

    @Test("the German page is German: its heading, its form, and the error a weak password gets, never the API's English")
    func germanPageAndError() throws {
        let page = try Page()
        let address = "german-reset@example.com"
        let link = try page.link("reset-password", email: address)
        let shown = page.get(link.oobCode, lang: "de")
        let html = Self.html(shown)
        #expect(html.contains(#"<html lang="de">"#) && html.contains("<h1>Neues Passwort wählen</h1>"))
        #expect(Self.field("lang", in: html) == "de")
        let csrf = try #require(Self.field("csrf", in: html))
        for (password, sentence) in [
            (address, "Dieses Passwort geht nicht: es darf nicht Ihre E-Mail-Adresse oder deren Teil vor dem @ sein."),
            ("kurz", "Dieses Passwort ist zu kurz: es braucht mindestens 8 Zeichen."),
        ] {
            let refused = page.post(["mode": "resetPassword", "oobCode": link.oobCode, "csrf": csrf, "lang": "de", "newPassword": password],
                                    cookie: Self.cookie(shown))
            let body = Self.html(refused)
            #expect(refused.status == 400 && body.contains(#"<p id="error">\#(sentence)</p>"#), "\(body)")
            #expect(body.contains(#"<html lang="de">"#) && body.contains("<h1>Dieser Link kann nicht verwendet werden</h1>"))
            #expect(!body.contains("The password"), "the API's English message stays out")
        }
        let forged = page.post(["oobCode": link.oobCode, "csrf": csrf, "lang": "de", "newPassword": "x"], cookie: nil)
        #expect(forged.status == 403 && Self.html(forged).contains("Das Formular ist abgelaufen"))
        let missing = page.router.handle(RouterTests.request("GET", "/action", query: ["lang": "de"]))
        #expect(missing.status == 400 && Self.html(missing).contains("Der Link ist ungültig oder wurde schon verwendet."))
    }

    @Test("past the per-IP limit the page's form answers a page in its language with Retry-After, not the API's JSON")
    func rateLimitedPage() throws {
        let page = try Page(ipPerMinute: 1)
        let fields = ["oobCode": "x", "csrf": "y", "lang": "de"]
        #expect(page.post(fields, cookie: nil).status == 403)
        let limited = page.post(fields, cookie: nil)
        #expect(limited.status == 429 && RouterTests.header(limited, "Retry-After") != nil)
        #expect(RouterTests.header(limited, "Content-Type") == "text/html; charset=utf-8")
        #expect(Self.html(limited).contains(#"<p id="error">Zu viele Versuche von hier."#))
    }

    @Test("the app name and support address are on every page, escaped")
    func branding() throws {
        let page = try Page(appName: "A&B <Co>", supportEmail: "help@acme.test")
        let html = Self.html(page.get("not-a-code"))
        #expect(html.contains("<title>A&amp;B &lt;Co&gt; – This link cannot be used</title>"))
        #expect(html.contains(#"<p class="product" id="product">A&amp;B &lt;Co&gt;</p>"#))
        #expect(html.contains(#"<a href="mailto:help@acme.test">help@acme.test</a>"#))
        #expect(!html.contains("A&B <Co>"))
    }
}
