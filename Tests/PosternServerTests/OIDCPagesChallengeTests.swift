import Foundation
import PosternCore
import PosternCrypto
@testable import PosternServer
import PosternTestSupport
import Testing

/// The challenge on the hosted sign-in page over HTTP (issue 47): the forms that send mail (the
/// link, the approval, "forgot") take the solution from the form, a refused or missing one shows
/// the sign-in page again with the challenge and sends nothing, a good one sends once; the page
/// shows the proof of work's script only when asked, under a CSP that allows this origin's
/// script and nothing inline.
@Suite("OIDC over HTTP: the challenge")
struct OIDCPagesChallengeTests {
    typealias Browser = OIDCPagesTests.Browser

    /// The provider with `mode` (a small proof of work, so the test solves it at once).
    static func provider(_ mode: ChallengeMode, ipPerHour: Int64 = 0) throws -> OIDCPagesTests.Provider {
        try OIDCPagesTests.Provider { settings in
            settings.challenge = ChallengeConfiguration(mode: mode, difficulty: 1_000, ipPerHour: ipPerHour, domainPerHour: 0)
        }
    }

    /// A solution of a fresh proof of work from the provider's gate, as the page's script sends it.
    static func solve(_ provider: OIDCPagesTests.Provider) throws -> String {
        guard case .proofOfWork(let challenge) = try provider.harness.service.challenges.offer() else { throw Failure.notProofOfWork }
        return try #require(ProofOfWorkSolver.payload(challenge))
    }

    enum Failure: Error { case notProofOfWork }

    /// A new sign-in page in `browser`: its form's hidden fields.
    static func signInForm(_ provider: OIDCPagesTests.Provider, _ browser: Browser) throws -> (page: HTTPResponse, form: [String: String]) {
        let page = browser.send("GET", "/oidc/authorize", query: provider.authorizeQuery)
        #expect(page.status == 200)
        return (page, ["request": try #require(OIDCPagesTests.field("request", in: page)), "csrf": try #require(OIDCPagesTests.field("csrf", in: page))])
    }

    static func csp(_ response: HTTPResponse) -> String { RouterTests.header(response, "Content-Security-Policy") ?? "" }

    static let script = #"<script src="/challenge.js" defer></script>"#

    @Test("--challenge always: the page shows the proof of work from the start, under script-src 'self' and connect-src 'self' only")
    func alwaysShowsIt() throws {
        let provider = try Self.provider(.always)
        let (page, _) = try Self.signInForm(provider, Browser(provider.router))
        let html = OIDCPagesTests.html(page)
        #expect(html.contains(Self.script) && html.contains(#"<input type="hidden" name="challengeSolution" value="">"#))
        #expect(!html.contains(#"id="retry""#), "nothing went wrong yet")
        let policy = Self.csp(page)
        #expect(policy == ChallengeScript.contentSecurityPolicy(.proofOfWork))
        #expect(policy.contains("script-src 'self';") && policy.contains("connect-src 'self';") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe") && !policy.contains("http"))
    }

    @Test("off, or when-limited before the limit: no script on the page, and the CSP allows none", arguments: [ChallengeMode.off, .whenLimited])
    func notAsked(mode: ChallengeMode) throws {
        let provider = try Self.provider(mode, ipPerHour: 5)
        let (page, _) = try Self.signInForm(provider, Browser(provider.router))
        #expect(!OIDCPagesTests.html(page).contains("<script") && !OIDCPagesTests.html(page).contains("challengeSolution"))
        #expect(Self.csp(page) == OIDCPages.contentSecurityPolicy && !Self.csp(page).contains("script-src"))
    }

    @Test("a good solution sends the link; used again, missing or malformed: the page again with the challenge and the address typed, and no mail")
    func solutionOnce() throws {
        let provider = try Self.provider(.always)
        let browser = Browser(provider.router)
        let mails = { provider.harness.store.queuedMail().count }
        let (_, form) = try Self.signInForm(provider, browser)
        let solution = try Self.solve(provider)
        let sent = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com", "challengeSolution": solution]) { $1 })
        #expect(sent.status == 200 && OIDCPagesTests.html(sent).contains(#"action="/oidc/code""#))
        #expect(mails() == 1)

        for given in [["challengeSolution": solution], [:], ["challengeSolution": "not base64 at all!"], ["altcha": solution]] {
            let (_, again) = try Self.signInForm(provider, browser)
            let refused = browser.send("POST", "/oidc/sign-in", form: again.merging(given.merging(["email": "eve@example.com"]) { $1 }) { $1 })
            #expect(refused.status == 400, "\(given.keys)")
            let html = OIDCPagesTests.html(refused)
            #expect(html.contains(#"<p id="retry">"#) && html.contains(Self.script) && html.contains(#"action="/oidc/sign-in""#))
            #expect(OIDCPagesTests.field("email", in: refused) == "eve@example.com", "what was typed stays")
            #expect(Self.csp(refused) == ChallengeScript.contentSecurityPolicy(.proofOfWork))
        }
        #expect(mails() == 1, "nothing sent without a new solution")
    }

    @Test("the ALTCHA widget's field is taken as the solution too")
    func altchaField() throws {
        let provider = try Self.provider(.always)
        let browser = Browser(provider.router)
        let (_, form) = try Self.signInForm(provider, browser)
        let sent = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com", "altcha": try Self.solve(provider)]) { $1 })
        #expect(sent.status == 200 && provider.harness.store.queuedMail().count == 1)
    }

    @Test("approve on another device and forgot-your-password take the solution too, and without one send nothing", arguments: ["/oidc/approve", "/oidc/forgot"])
    func otherMailingForms(path: String) throws {
        let provider = try Self.provider(.always)
        let browser = Browser(provider.router)
        let (_, form) = try Self.signInForm(provider, browser)
        let without = browser.send("POST", path, form: form.merging(["email": "ada@example.com"]) { $1 })
        #expect(without.status == 400 && OIDCPagesTests.html(without).contains(Self.script))
        #expect(provider.harness.store.queuedMail().isEmpty)
        let with = browser.send("POST", path, form: form.merging(["email": "ada@example.com", "challengeSolution": try Self.solve(provider)]) { $1 })
        // The approve page with its number, or "if it has an account, a link is on its way" (the
        // same page for every address): not the sign-in page again.
        #expect(with.status == 200 && !OIDCPagesTests.html(with).contains(Self.script) && !OIDCPagesTests.html(with).contains(#"action="/oidc/sign-in""#))
        if path == "/oidc/approve" {
            #expect(OIDCPagesTests.html(with).contains(#"action="/oidc/approved""#) && provider.harness.store.queuedMail().count == 1)
        }
    }

    @Test("when-limited: past the client IP's hourly allowance the page asks, shows the challenge, and a solution sends")
    func whenLimited() throws {
        let provider = try Self.provider(.whenLimited, ipPerHour: 1)
        let browser = Browser(provider.router)
        let (_, form) = try Self.signInForm(provider, browser)
        let first = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com"]) { $1 })
        #expect(first.status == 200 && provider.harness.store.queuedMail().count == 1)
        let (page, again) = try Self.signInForm(provider, browser)
        #expect(!OIDCPagesTests.html(page).contains("<script"), "the page does not know yet")
        let asked = browser.send("POST", "/oidc/sign-in", form: again.merging(["email": "bob@example.com"]) { $1 })
        #expect(asked.status == 400 && OIDCPagesTests.html(asked).contains(Self.script))
        #expect(provider.harness.store.queuedMail().count == 1)
        let solved = browser.send(
            "POST", "/oidc/sign-in", form: again.merging(["email": "bob@example.com", "challengeSolution": try Self.solve(provider)]) { $1 })
        #expect(solved.status == 200 && provider.harness.store.queuedMail().count == 2)
    }

    @Test("/challenge.js: our script as a static file, fetching /v1/challenge and hashing with WebCrypto")
    func script() {
        let provider = try? Self.provider(.always)
        let answer = provider?.router.handle(RouterTests.request("GET", "/challenge.js"))
        #expect(answer?.status == 200)
        #expect(answer.flatMap { RouterTests.header($0, "Content-Type") } == "text/javascript; charset=utf-8")
        let source = answer.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
        #expect(source.contains(#"fetch("/v1/challenge""#) && source.contains(#"crypto.subtle.digest("SHA-256""#))
        #expect(source.contains(#"const fieldName = "challengeSolution""#) && source.contains("requestSubmit(submitter)"))
        #expect(!source.contains("eval(") && !source.contains("innerHTML"))
    }

    @Test("a CAPTCHA: the page carries the service's widget and script under a CSP of its origins; its token from the service's field sends, a refused one shows the page again and sends nothing")
    func captcha() throws {
        let provider = try OIDCPagesTests.Provider(challengeHTTP: Siteverify()) { settings in
            settings.challenge = ChallengeConfiguration(mode: .always, captcha: .turnstile, captchaSiteKey: "site-key-7")
        }
        let browser = Browser(provider.router)
        let (page, form) = try Self.signInForm(provider, browser)
        let html = OIDCPagesTests.html(page)
        #expect(html.contains(#"<div class="cf-turnstile" data-sitekey="site-key-7"></div>"#))
        #expect(html.contains(#"<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" defer></script>"#))
        #expect(!html.contains("challengeSolution") && !html.contains("/challenge.js"))
        #expect(Self.csp(page) == ChallengeScript.contentSecurityPolicy(.captcha(.turnstile, siteKey: "site-key-7")))
        #expect(Self.csp(page).contains("script-src https://challenges.cloudflare.com;"))

        let refused = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com", "cf-turnstile-response": "a-bad-token"]) { $1 })
        #expect(refused.status == 400 && OIDCPagesTests.html(refused).contains(#"<p id="retry">"#))
        #expect(provider.harness.store.queuedMail().isEmpty)
        // Another service's field is not read: only the configured one's.
        let other = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com", "h-captcha-response": Siteverify.good]) { $1 })
        #expect(other.status == 400 && provider.harness.store.queuedMail().isEmpty)
        let sent = browser.send("POST", "/oidc/sign-in", form: form.merging(["email": "ada@example.com", "cf-turnstile-response": Siteverify.good]) { $1 })
        #expect(sent.status == 200 && provider.harness.store.queuedMail().count == 1)
    }

    /// A CAPTCHA service's siteverify: a token is genuine when it is ``good``.
    final class Siteverify: ProviderHTTP {
        static let good = "a-good-token"
        func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse { throw ProviderHTTPError("not served") }
        func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
            -> ProviderHTTPResponse
        {
            let genuine = fields.contains { $0 == ("response", Self.good) }
            return ProviderHTTPResponse(status: 200, body: Array(#"{"success":\#(genuine)}"#.utf8), cacheControl: nil)
        }
    }

    @Test("a CAPTCHA's page is allowed exactly its service's origins: scripts and frames from there, no script of ours", arguments: CaptchaService.allCases)
    func captchaPolicy(service: CaptchaService) {
        let policy = ChallengeScript.contentSecurityPolicy(.captcha(service, siteKey: "k"))
        let directives = Dictionary(uniqueKeysWithValues: policy.split(separator: ";").map { part in
            let words = part.split(separator: " ").map(String.init)
            return (words.first ?? "", Array(words.dropFirst()))
        })
        #expect(directives["script-src"] == ChallengeScript.origins(of: service))
        #expect(directives["frame-src"] == ChallengeScript.origins(of: service))
        #expect(directives["default-src"] == ["'none'"] && directives["frame-ancestors"] == ["'none'"])
        #expect(ChallengeScript.origins(of: service).allSatisfy { $0.hasPrefix("https://") })
        // The service's script is among what is allowed (a wildcard origin allows its subdomains).
        let host = URL(string: service.scriptURL)?.host ?? ""
        #expect(ChallengeScript.origins(of: service).contains { origin in
            service.scriptURL.hasPrefix(origin) || (origin.hasPrefix("https://*.") && host.hasSuffix(String(origin.dropFirst("https://*".count))))
        })
        for other in CaptchaService.allCases where other != service {
            #expect(!policy.contains(ChallengeScript.origins(of: other)[0]))
        }
    }
}
