import Foundation
import Testing
@testable import PosternCore

/// The hosted sign-in page's challenge (issue 47) from the bundled templates: nothing of it unless
/// asked for; the proof of work as a hidden `challengeSolution` field in each form that sends mail,
/// our script and the words for a browser without JavaScript; a CAPTCHA as its service's widget
/// element and script. The password form sends no mail and never carries a challenge.
@Suite("OIDC sign-in page: the challenge")
struct PageRendererChallengeTests {
    private static let languages = ["en", "de"]
    private let form = OIDCPageForm(request: "req-0123", csrf: "tok-4567")
    private let pages: PageRenderer
    private let words: PageWords

    init() throws {
        let templates = TemplateSet(sources: try MailFixtures.bundledSources())
        pages = try templates.pageRenderer(branding: Branding(appName: "Postern"))
        words = templates.pageWords
    }

    private func signIn(_ challenge: PageChallenge?, retry: OIDCSignInRetry? = nil, lang: String = "en") -> String {
        pages.render(
            .oidcSignIn(form, clientName: "Grafana", loginHint: "jane@example.com", passwords: true, retry: retry, challenge: challenge),
            lang: lang
        ).html
    }

    /// The `<form …>…</form>` elements of `html` by their id.
    private func forms(_ html: String) -> [String: String] {
        var found: [String: String] = [:]
        for part in html.components(separatedBy: "<form ").dropFirst() {
            let form = "<form " + (part.components(separatedBy: "</form>").first ?? "")
            guard let start = form.range(of: #"id=""#), let end = form[start.upperBound...].firstIndex(of: "\"") else { continue }
            found[String(form[start.upperBound..<end])] = form
        }
        return found
    }

    private static let hiddenField = #"<input type="hidden" name="challengeSolution" value="">"#

    @Test("no challenge asked: no script, no solution field, no widget, no words about JavaScript", arguments: languages)
    func none(lang: String) {
        let html = signIn(nil, lang: lang)
        #expect(!html.contains("<script") && !html.contains("<noscript") && !html.contains("challengeSolution"))
        for service in CaptchaService.allCases { #expect(!html.contains(service.widgetClass)) }
        #expect(!html.contains(HTMLEscaping.escape(words.word(.oidcChallengeNoScript, locale: lang))))
    }

    @Test("proof of work: a hidden challengeSolution in the address and forgot forms only, our script once, words without JavaScript", arguments: languages)
    func proofOfWork(lang: String) throws {
        let html = signIn(.proofOfWork, lang: lang)
        let all = forms(html)
        #expect(Set(all.keys) == ["link-form", "password-form", "forgot-form"])
        #expect(try #require(all["link-form"]).contains(Self.hiddenField))
        #expect(try #require(all["forgot-form"]).contains(Self.hiddenField))
        #expect(try !#require(all["password-form"]).contains("challengeSolution"), "a password sends no mail")
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(html.contains(#"<script src="/challenge.js" defer></script>"#))
        #expect(PageChallenge.proofOfWorkScript == "/challenge.js" && PageChallenge.proofOfWorkField == "challengeSolution")
        let noScript = HTMLEscaping.escape(words.word(.oidcChallengeNoScript, locale: lang))
        #expect(html.contains(#"<noscript><p id="challenge-noscript">\#(noScript)</p></noscript>"#))
        // Still no inline script and no event handler: the CSP allows neither.
        #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil)
        #expect(!html.contains("<script>") && !html.contains("javascript:"))
        for service in CaptchaService.allCases { #expect(!html.contains(service.widgetClass)) }
    }

    @Test("a CAPTCHA: the service's widget with its site key in the forms that send mail, and the service's script", arguments: CaptchaService.allCases)
    func captcha(service: CaptchaService) throws {
        let html = signIn(.captcha(service, siteKey: "0x4AAAA-site"))
        let widget = #"<div class="\#(service.widgetClass)" data-sitekey="0x4AAAA-site"></div>"#
        let all = forms(html)
        #expect(try #require(all["link-form"]).contains(widget))
        #expect(try #require(all["forgot-form"]).contains(widget))
        #expect(try !#require(all["password-form"]).contains(service.widgetClass))
        #expect(html.contains(#"<script src="\#(service.scriptURL)" defer></script>"#))
        #expect(html.components(separatedBy: "<script").count == 2)
        #expect(!html.contains("challengeSolution") && !html.contains("/challenge.js"))
        #expect(html.contains(#"<noscript><p id="challenge-noscript">"#))
    }

    @Test("the site key is escaped like every value")
    func siteKeyEscaped() {
        let html = signIn(.captcha(.turnstile, siteKey: #""><script>alert(1)</script>"#))
        #expect(html.contains(#"data-sitekey="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;""#))
        #expect(!html.contains("<script>alert"))
    }

    @Test("asked after a send: the words say why, above the challenge", arguments: languages)
    func askedAgain(lang: String) {
        let html = signIn(.proofOfWork, retry: .challenge, lang: lang)
        #expect(html.contains(#"<p id="retry">\#(HTMLEscaping.escape(words.word(.oidcChallenge, locale: lang)))</p>"#))
        #expect(html.contains(Self.hiddenField))
    }

    @Test("what a configuration shows: nothing when off, the CAPTCHA with its site key, else the proof of work")
    func fromConfiguration() {
        #expect(PageChallenge(ChallengeConfiguration(mode: .off)) == nil)
        #expect(PageChallenge(ChallengeConfiguration(mode: .off, captcha: .turnstile, captchaSiteKey: "k")) == nil)
        #expect(PageChallenge(ChallengeConfiguration(mode: .whenLimited)) == .proofOfWork)
        #expect(PageChallenge(ChallengeConfiguration(mode: .always)) == .proofOfWork)
        #expect(PageChallenge(ChallengeConfiguration(mode: .always, captcha: .hcaptcha, captchaSiteKey: "k")) == .captcha(.hcaptcha, siteKey: "k"))
        #expect(PageChallenge.proofOfWork.scriptURL == "/challenge.js")
        #expect(PageChallenge.captcha(.recaptcha, siteKey: "k").scriptURL == CaptchaService.recaptcha.scriptURL)
    }

    @Test("every word of the challenge is translated")
    func translated() {
        for word in [PageWord.oidcChallenge, .oidcChallengeNoScript] {
            #expect(words.word(word, locale: "de") != words.word(word, locale: "en"), "\(word)")
        }
    }
}
