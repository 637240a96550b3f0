import Foundation
import Testing
@testable import PosternCore

/// The OpenID Connect provider's hosted pages from the bundled templates, in en and de: each
/// form's action and hidden fields, the autocomplete attributes browsers and password managers
/// go by, every attacker-chosen value (client names, addresses) escaped, no script anywhere, and
/// a check-mail page that differs between two addresses only by the address.
@Suite("OIDC hosted pages")
struct PageRendererOIDCTests {
    private static let languages = ["en", "de"]
    private let form = OIDCPageForm(request: "req-0123", csrf: "tok-4567")
    private let pages: PageRenderer
    private let words: PageWords

    init() throws {
        let templates = TemplateSet(sources: try MailFixtures.bundledSources())
        pages = try templates.pageRenderer(branding: Branding(appName: "Postern"))
        words = templates.pageWords
    }

    /// `word` in `lang` as a page shows it: escaped, with `name` in place of its `%@`.
    private func shown(_ word: PageWord, _ lang: String, naming name: String? = nil) -> String {
        let text = words.word(word, locale: lang)
        guard let name else { return HTMLEscaping.escape(text) }
        return HTMLEscaping.escape(text.replacingOccurrences(of: "%@", with: name))
    }

    /// The `<form …>…</form>` elements of `html`, in order.
    private func forms(_ html: String) -> [String] {
        html.components(separatedBy: "<form ").dropFirst().map { "<form " + ($0.components(separatedBy: "</form>").first ?? "") }
    }

    /// Where each form of `html` posts to.
    private func actions(_ html: String) -> [String] {
        forms(html).map { form in
            guard let start = form.range(of: #"action=""#), let end = form[start.upperBound...].firstIndex(of: "\"") else { return "" }
            return String(form[start.upperBound..<end])
        }
    }

    /// The hidden fields every OIDC form carries: the request, the token and the page's language.
    private func expectHiddenFields(_ form: String, lang: String, request: String = "req-0123", csrf: String = "tok-4567") {
        #expect(form.contains(#"method="post""#), "\(form)")
        #expect(form.contains(#"<input type="hidden" name="request" value="\#(request)">"#), "\(form)")
        #expect(form.contains(#"<input type="hidden" name="csrf" value="\#(csrf)">"#), "\(form)")
        #expect(form.contains(#"<input type="hidden" name="lang" value="\#(lang)">"#), "\(form)")
    }

    @Test("sign-in: one address form to /oidc/sign-in, prefilled with the hint, and nothing about passwords unless allowed", arguments: languages)
    func signInWithoutPasswords(lang: String) throws {
        let page = pages.render(.oidcSignIn(form, clientName: "Grafana", loginHint: "jane@example.com", passwords: false), lang: lang)
        #expect(page.locale == lang)
        let html = page.html
        #expect(html.contains("<title>Postern – \(shown(.oidcSignInHeading, lang, naming: "Grafana"))</title>"))
        #expect(html.contains("<h1>\(shown(.oidcSignInHeading, lang, naming: "Grafana"))</h1>"))
        let all = forms(html)
        #expect(all.count == 1)
        let linkForm = try #require(all.first)
        #expect(linkForm.hasPrefix(#"<form method="post" action="/oidc/sign-in""#))
        expectHiddenFields(linkForm, lang: lang)
        #expect(linkForm.contains(#"<input type="email" name="email" id="email" value="jane@example.com" autocomplete="username" required autofocus>"#))
        #expect(linkForm.contains(">\(shown(.oidcSendLink, lang))</button>"))
        #expect(!html.contains(#"type="password""#) && !html.contains("/oidc/password") && !html.contains("/oidc/forgot"))
        #expect(!html.contains(#"id="retry""#))
    }

    @Test("sign-in with passwords: the password form to /oidc/password and the forgot form to /oidc/forgot", arguments: languages)
    func signInWithPasswords(lang: String) throws {
        let html = pages.render(.oidcSignIn(form, clientName: "Grafana", loginHint: nil, passwords: true), lang: lang).html
        let all = forms(html)
        #expect(actions(html) == ["/oidc/sign-in", "/oidc/password", "/oidc/forgot"])
        try #require(all.count == 3)
        for form in all { expectHiddenFields(form, lang: lang) }
        // No hint: the address fields are empty, not "nil".
        #expect(all[0].contains(#"name="email" id="email" value="" autocomplete="username""#))
        #expect(all[1].contains(#"<input type="email" name="email" id="password-email" value="" autocomplete="username" required>"#))
        #expect(all[1].contains(#"<input type="password" name="password" id="password" autocomplete="current-password" required>"#))
        #expect(all[1].contains(">\(shown(.oidcPasswordSubmit, lang))</button>"))
        #expect(all[2].contains(#"<input type="email" name="email" id="forgot-email" value="" autocomplete="username" required>"#))
        #expect(!all[2].contains(#"name="password""#), "the forgot form never carries a password")
        #expect(html.contains("<summary>\(shown(.oidcForgot, lang))</summary>"))
        #expect(html.contains("<h2>\(shown(.oidcPasswordHeading, lang))</h2>"))
        #expect(html.contains(#"<label for="password">\#(shown(.oidcPasswordLabel, lang))</label>"#))
    }

    @Test("sign-in again: the line above the form says why", arguments: languages)
    func signInRetry(lang: String) throws {
        let wrong = pages.render(.oidcSignIn(form, clientName: "G", loginHint: "a@example.com", passwords: true, retry: .wrongPassword), lang: lang).html
        #expect(wrong.contains(#"<p id="retry">\#(shown(.oidcWrongPassword, lang))</p>"#))
        let bad = pages.render(.oidcSignIn(form, clientName: "G", loginHint: "a@", passwords: false, retry: .badAddress), lang: lang).html
        #expect(bad.contains(#"<p id="retry">\#(shown(.oidcBadAddress, lang))</p>"#))
        #expect(shown(.oidcWrongPassword, lang) != shown(.oidcBadAddress, lang))
        // The retry line comes before the first form.
        #expect(bad.range(of: #"id="retry""#).map { $0.lowerBound < (bad.range(of: "<form ")?.lowerBound ?? bad.startIndex) } == true)
    }

    @Test("check your mail: the code form to /oidc/code with the address, and the restart form", arguments: languages)
    func checkMail(lang: String) throws {
        let html = pages.render(.oidcCheckMail(form, email: "jane@example.com"), lang: lang).html
        #expect(html.contains("<h1>\(shown(.oidcCheckMailHeading, lang))</h1>"))
        let sentence = words.word(.oidcCheckMailBody, locale: lang).components(separatedBy: "%@").map(HTMLEscaping.escape)
        #expect(html.contains(#"<p id="sent">\#(sentence[0])<strong>jane@example.com</strong>\#(sentence[1])</p>"#))
        let all = forms(html)
        #expect(actions(html) == ["/oidc/code", "/oidc/restart"])
        try #require(all.count == 2)
        for form in all { expectHiddenFields(form, lang: lang) }
        #expect(all[0].contains(#"<input type="hidden" name="email" value="jane@example.com">"#))
        #expect(all[0].contains(
            #"<input type="text" name="code" id="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="7" required autofocus>"#))
        #expect(all[0].contains(">\(shown(.oidcCheckMailSubmit, lang))</button>"))
        #expect(!all[1].contains(#"name="email""#) && all[1].contains(">\(shown(.oidcCheckMailRestart, lang))</button>"))
        #expect(!html.contains(#"id="retry""#))
        let retry = pages.render(.oidcCheckMail(form, email: "jane@example.com", retry: true), lang: lang).html
        #expect(retry.contains(#"<p id="retry">\#(shown(.oidcCheckMailWrong, lang))</p>"#))
    }

    @Test("check your mail says the same for every address: two pages differ only by the address", arguments: languages)
    func checkMailIsTheSameForEveryAddress(lang: String) throws {
        let known = "jane.doe@example.com"
        let unknown = "nobody-here@mail.example.org"
        let first = pages.render(.oidcCheckMail(form, email: known), lang: lang).html
        let second = pages.render(.oidcCheckMail(form, email: unknown), lang: lang).html
        #expect(first != second)
        #expect(first.components(separatedBy: known).count == 3, "the sentence and the hidden field")
        #expect(first.replacingOccurrences(of: known, with: "ADDRESS") == second.replacingOccurrences(of: unknown, with: "ADDRESS"))
        // The same for "forgot your password".
        let forgotFirst = pages.render(.oidcForgotSent(email: known), lang: lang).html
        let forgotSecond = pages.render(.oidcForgotSent(email: unknown), lang: lang).html
        #expect(forgotFirst.contains("<strong>\(known)</strong>"))
        #expect(forgotFirst.replacingOccurrences(of: known, with: "ADDRESS") == forgotSecond.replacingOccurrences(of: unknown, with: "ADDRESS"))
    }

    @Test("the link in the browser that started: one button POSTing the code to /oidc/resume", arguments: languages)
    func continuePage(lang: String) throws {
        let html = pages.render(.oidcContinue(form, oobCode: "oob-89", clientName: "Gitea"), lang: lang).html
        #expect(html.contains("<h1>\(shown(.oidcContinueHeading, lang, naming: "Gitea"))</h1>"))
        let all = forms(html)
        #expect(all.count == 1)
        let resume = try #require(all.first)
        #expect(resume.hasPrefix(#"<form method="post" action="/oidc/resume""#))
        expectHiddenFields(resume, lang: lang)
        #expect(resume.contains(#"<input type="hidden" name="oobCode" value="oob-89">"#))
        #expect(resume.contains(">\(shown(.oidcContinueSubmit, lang))</button>"))
        // A GET shows the button; nothing on the page sends the code by itself.
        #expect(html.components(separatedBy: "oob-89").count == 2, "the code only in the form's field")
        #expect(!html.contains("<a ") && !html.contains("http-equiv"))
    }

    @Test("consent: what each asked scope means, openid always, the account, allow and deny in one form", arguments: languages)
    func consent(lang: String) throws {
        let html = pages.render(.oidcConsent(form, clientName: "Outline", scopes: ["openid", "email"], email: "jane@example.com"), lang: lang).html
        #expect(html.contains("<h1>\(shown(.oidcConsentHeading, lang, naming: "Outline"))</h1>"))
        #expect(html.contains("<p>\(shown(.oidcConsentBody, lang, naming: "Outline"))</p>"))
        #expect(html.contains("<li>\(shown(.oidcScopeOpenID, lang))</li>") && html.contains("<li>\(shown(.oidcScopeEmail, lang))</li>"))
        #expect(!html.contains(shown(.oidcScopeProfile, lang)) && !html.contains(shown(.oidcScopeOfflineAccess, lang)))
        let account = words.word(.oidcConsentAccount, locale: lang).components(separatedBy: "%@").map(HTMLEscaping.escape)
        #expect(html.contains(#"<p id="account">\#(account[0])<strong>jane@example.com</strong>\#(account[1])</p>"#))
        let all = forms(html)
        #expect(all.count == 1)
        let decide = try #require(all.first)
        #expect(decide.hasPrefix(#"<form method="post" action="/oidc/consent""#))
        expectHiddenFields(decide, lang: lang)
        #expect(decide.contains(#"<button type="submit" name="decision" value="allow" id="allow">\#(shown(.oidcConsentAllow, lang))</button>"#))
        #expect(decide.contains(
            #"<button type="submit" name="decision" value="deny" class="secondary" id="deny">\#(shown(.oidcConsentDeny, lang))</button>"#))

        let everything = pages.render(
            .oidcConsent(form, clientName: "Outline", scopes: ["offline_access", "profile", "email"], email: "j@example.com"), lang: lang).html
        let items = everything.components(separatedBy: "<li>").count - 1
        #expect(items == 4, "openid is listed even when the list leaves it out")
        #expect(everything.contains(shown(.oidcScopeProfile, lang)) && everything.contains(shown(.oidcScopeOfflineAccess, lang)))
    }

    @Test("sign out? with and without the client's name, one form to /oidc/logout; then signed out", arguments: languages)
    func logout(lang: String) throws {
        let named = pages.render(.oidcLogoutConfirm(OIDCPageForm(request: "state-1", csrf: "tok-2"), clientName: "Nextcloud"), lang: lang).html
        #expect(named.contains("<h1>\(shown(.oidcLogoutHeadingOf, lang, naming: "Nextcloud"))</h1>"))
        let all = forms(named)
        #expect(all.count == 1)
        let logout = try #require(all.first)
        #expect(logout.hasPrefix(#"<form method="post" action="/oidc/logout""#))
        expectHiddenFields(logout, lang: lang, request: "state-1", csrf: "tok-2")
        #expect(logout.contains(">\(shown(.oidcLogoutSubmit, lang))</button>"))
        let anonymous = pages.render(.oidcLogoutConfirm(form, clientName: nil), lang: lang).html
        #expect(anonymous.contains("<h1>\(shown(.oidcLogoutHeading, lang))</h1>") && !anonymous.contains("%@"))

        let out = pages.render(.oidcSignedOut, lang: lang).html
        #expect(out.contains("<h1>\(shown(.oidcSignedOutHeading, lang))</h1>"))
        #expect(out.contains(#"<p id="done">\#(shown(.oidcSignedOut, lang))</p>"#))
        #expect(forms(out).isEmpty && !out.contains("<strong>"))
    }

    @Test("each refusal has its own words on the provider's error page, and German ones in German", arguments: languages)
    func refusals(lang: String) throws {
        let refusals: [(OIDCPageRefusal, PageWord)] = [
            (.unknownClient, .oidcRefusedUnknownClient), (.badRedirectURI, .oidcRefusedBadRedirectURI),
            (.requestExpired, .oidcRefusedRequestExpired), (.otherBrowser, .oidcRefusedOtherBrowser), (.form, .oidcRefusedForm),
            (.tooManyAttempts, .oidcRefusedTooMany), (.unavailable, .errorUnavailable),
        ]
        var sentences: Set<String> = []
        for (refusal, word) in refusals {
            let html = pages.render(.oidcRefused(refusal), lang: lang).html
            #expect(html.contains("<h1>\(shown(.oidcRefusedHeading, lang))</h1>"), "\(refusal)")
            #expect(html.contains(#"<p id="error">\#(shown(word, lang))</p>"#), "\(refusal)")
            #expect(forms(html).isEmpty)
            sentences.insert(shown(word, lang))
        }
        #expect(sentences.count == refusals.count)
        #expect(shown(.oidcRefusedOtherBrowser, lang).contains(lang == "de" ? "6-stelligen Code" : "6-digit code"))
    }

    @Test("every OIDC word is translated, and the German pages are German")
    func german() throws {
        for word in PageWord.allCases where word.rawValue.hasPrefix("oidc.") {
            #expect(words.word(word, locale: "de") != words.word(word, locale: "en"), "\(word) is translated")
        }
        #expect(pages.render(.oidcSignIn(form, clientName: "Grafana", loginHint: nil, passwords: true), lang: "de-AT").html
            .contains("<h1>Bei Grafana anmelden</h1>"))
        #expect(pages.render(.oidcConsent(form, clientName: "Grafana", scopes: ["openid"], email: "a@example.com"), lang: "de").html
            .contains("<li>wissen, wer Sie sind</li>"))
        #expect(pages.render(.oidcSignedOut, lang: "fr").locale == "en")
    }

    @Test("client names, addresses and tokens are escaped wherever they appear", arguments: languages)
    func escaping(lang: String) throws {
        let evilName = #"<script>alert(1)</script>"><img src=x onerror=alert(2)>"#
        let evilAddress = #""><img src=x onerror=alert(3)>@example.com"#
        let evilForm = OIDCPageForm(request: #"r"><script>"#, csrf: "t'<")
        let shownPages: [HostedPage] = [
            .oidcSignIn(evilForm, clientName: evilName, loginHint: evilAddress, passwords: true, retry: .wrongPassword),
            .oidcCheckMail(evilForm, email: evilAddress, retry: true),
            .oidcForgotSent(email: evilAddress),
            .oidcContinue(evilForm, oobCode: #"o"><script>"#, clientName: evilName),
            .oidcConsent(evilForm, clientName: evilName, scopes: ["openid", "email", "profile", "offline_access"], email: evilAddress),
            .oidcLogoutConfirm(evilForm, clientName: evilName),
        ]
        for page in shownPages {
            let html = pages.render(page, lang: lang).html
            // The values' text stays ("onerror=alert(2)" is harmless as text); no tag or attribute comes of it.
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains(#"" onerror"#), "\(page.kind)")
        }
        let signIn = pages.render(shownPages[0], lang: lang).html
        let escapedName = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"
        #expect(signIn.contains("<h1>\(shown(.oidcSignInHeading, lang, naming: evilName))</h1>"))
        #expect(signIn.contains(escapedName))
        #expect(signIn.contains("<title>Postern – \(shown(.oidcSignInHeading, lang, naming: evilName))</title>"))
        #expect(signIn.contains(#"value="&quot;&gt;&lt;img src=x onerror=alert(3)&gt;@example.com" autocomplete="username""#))
        #expect(signIn.contains(#"<input type="hidden" name="request" value="r&quot;&gt;&lt;script&gt;">"#))
        #expect(signIn.contains(#"<input type="hidden" name="csrf" value="t&#39;&lt;">"#))
        let consent = pages.render(shownPages[4], lang: lang).html
        #expect(consent.contains("<p>\(shown(.oidcConsentBody, lang, naming: evilName))</p>"))
        #expect(consent.contains("<strong>&quot;&gt;&lt;img src=x onerror=alert(3)&gt;@example.com</strong>"))
        // A name that holds "%@" is not filled in again.
        let nested = pages.render(.oidcContinue(form, oobCode: "o", clientName: "A %@ B"), lang: lang).html
        #expect(nested.contains("<h1>\(shown(.oidcContinueHeading, lang, naming: "A %@ B"))</h1>"))
    }

    @Test("the OIDC pages work without JavaScript: no script, no event handler, every form a POST with its token")
    func noScript() throws {
        for kind in PageKind.allCases where kind.rawValue.hasPrefix("oidc-") {
            for lang in Self.languages {
                let html = pages.render(.sample(of: kind), lang: lang).html.lowercased()
                #expect(!html.contains("<script") && !html.contains("javascript:"), "\(kind)")
                #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(kind): no event handler attribute")
                #expect(!html.contains("{{") && !html.contains("%@"), "\(kind)")
                let all = forms(html)
                #expect(!all.isEmpty, "\(kind)")
                for form in all {
                    #expect(form.hasPrefix(#"<form method="post" action="/oidc/"#) && form.contains(#"name="csrf" value="sample-csrf-token""#))
                }
            }
        }
    }

    @Test("templates check keeps an OIDC page from dropping its fields, or a scope from the consent page")
    func checked() {
        var sources = MailFixtures.minimalSources()
        sources["en/page-oidc-consent.html"] = "<form>{{request}} {{csrf}} {{lang}} {{scopeOpenid}} {{scopeEmail}} {{scopeProfile}}</form>"
        sources["en/page-oidc-check-mail.html"] = "<form>{{request}} {{csrf}} {{lang}}</form>"
        sources["en/page-oidc-sign-in.html"] = "<form>{{request}} {{csrf}} {{lang}} {{oobCode}}</form>"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.templateName) == ["en/page-oidc-check-mail.html", "en/page-oidc-consent.html", "en/page-oidc-sign-in.html"], "\(problems)")
        #expect(problems.map(\.code) == [.missingVariable, .missingVariable, .unknownVariable])
        #expect(problems.first?.detail == "page-oidc-check-mail must use {{email}}")
        #expect(problems.dropFirst().first?.detail == "page-oidc-consent must use {{scopeOfflineAccess}}")
    }

    @Test("sign-in: the address form's second button asks for an approval on another device instead", arguments: languages)
    func signInOffersApproval(lang: String) throws {
        let html = pages.render(.oidcSignIn(form, clientName: "Grafana", loginHint: nil, passwords: false), lang: lang).html
        let linkForm = try #require(forms(html).first)
        // Enter still sends the link: the link's button comes first.
        let send = try #require(linkForm.range(of: #"id="send-link""#))
        let approve = try #require(linkForm.range(
            of: #"<button type="submit" formaction="/oidc/approve" class="secondary" id="approve">\#(shown(.oidcApproveButton, lang))</button>"#))
        #expect(send.lowerBound < approve.lowerBound)
        let ended = pages.render(.oidcSignIn(form, clientName: "G", loginHint: "a@example.com", passwords: false, retry: .approvalEnded), lang: lang).html
        #expect(ended.contains(#"<p id="retry">\#(shown(.oidcApprovalEnded, lang))</p>"#))
        #expect(Set([shown(.oidcApprovalEnded, lang), shown(.oidcWrongPassword, lang), shown(.oidcBadAddress, lang)]).count == 3)
    }

    @Test("approve: the number to type on the other device, Continue to /oidc/approved with the address and number, and the restart form", arguments: languages)
    func approve(lang: String) throws {
        let html = pages.render(.oidcApprove(form, email: "jane@example.com", number: 47), lang: lang).html
        #expect(html.contains("<h1>\(shown(.oidcApproveHeading, lang))</h1>"))
        let sent = words.word(.oidcApproveBody, locale: lang).components(separatedBy: "%@").map(HTMLEscaping.escape)
        #expect(html.contains(#"<p id="sent">\#(sent[0])<strong>jane@example.com</strong>\#(sent[1])</p>"#))
        let instruction = words.word(.oidcApproveNumber, locale: lang).components(separatedBy: "%@").map(HTMLEscaping.escape)
        #expect(html.contains(#"<p id="approval">\#(instruction[0])<strong id="number" class="code">47</strong>\#(instruction[1])</p>"#))
        let all = forms(html)
        #expect(actions(html) == ["/oidc/approved", "/oidc/restart"])
        try #require(all.count == 2)
        for form in all { expectHiddenFields(form, lang: lang) }
        #expect(all[0].contains(#"<input type="hidden" name="email" value="jane@example.com">"#))
        #expect(all[0].contains(#"<input type="hidden" name="number" value="47">"#))
        #expect(all[0].contains(">\(shown(.oidcApproveSubmit, lang))</button>"))
        #expect(!all[0].contains(#"type="text""#), "nothing to type here: the number is typed on the other device")
        #expect(all[1].contains(">\(shown(.oidcCheckMailRestart, lang))</button>"))
        #expect(!html.contains(#"id="retry""#))
        let waiting = pages.render(.oidcApprove(form, email: "jane@example.com", number: 47, waiting: true), lang: lang).html
        #expect(waiting.contains(#"<p id="retry">\#(shown(.oidcApproveWaiting, lang))</p>"#))
        // The same page for every address: two differ only by the address (and the number drawn).
        let other = pages.render(.oidcApprove(form, email: "nobody-here@mail.example.org", number: 47), lang: lang).html
        #expect(html.replacingOccurrences(of: "jane@example.com", with: "ADDRESS") == other.replacingOccurrences(of: "nobody-here@mail.example.org", with: "ADDRESS"))
    }

    @Test("approve: the address and the form's fields are escaped", arguments: languages)
    func approveEscaping(lang: String) throws {
        let evilAddress = #""><img src=x onerror=alert(3)>@example.com"#
        let html = pages.render(.oidcApprove(OIDCPageForm(request: #"r"><script>"#, csrf: "t'<"), email: evilAddress, number: 12, waiting: true), lang: lang).html
        #expect(!html.contains("<script") && !html.contains("<img") && !html.contains(#"" onerror"#))
        #expect(html.contains("<strong>&quot;&gt;&lt;img src=x onerror=alert(3)&gt;@example.com</strong>"))
        #expect(html.contains(#"<input type="hidden" name="email" value="&quot;&gt;&lt;img src=x onerror=alert(3)&gt;@example.com">"#))
        #expect(html.contains(#"<input type="hidden" name="request" value="r&quot;&gt;&lt;script&gt;">"#))
        #expect(html.contains(#"<input type="hidden" name="csrf" value="t&#39;&lt;">"#))
    }

    @Test("templates check keeps the approve page from dropping the number or the address")
    func approveChecked() {
        var sources = MailFixtures.minimalSources()
        sources["en/page-oidc-approve.html"] = "<form>{{request}} {{csrf}} {{lang}} {{email}}</form>"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.templateName) == ["en/page-oidc-approve.html"], "\(problems)")
        #expect(problems.first?.code == .missingVariable)
        #expect(problems.first?.detail == "page-oidc-approve must use {{approvalNumber}}")
    }
}
