import Foundation
import Testing
@testable import PosternCore

/// The hosted pages from the bundled templates: the words of the page's language (the errors
/// included), the address marked up inside its sentence, every value escaped, and the check
/// that keeps a page template from dropping what the page needs.
@Suite("Hosted page templates")
struct PageRendererTests {
    private func pages() throws -> PageRenderer {
        try TemplateSet(sources: try MailFixtures.bundledSources()).pageRenderer(branding: Branding(appName: "Postern"))
    }

    @Test("the German page is German, its errors included; a language without words falls back to English")
    func germanWords() throws {
        let pages = try pages()
        let words = TemplateSet(sources: try MailFixtures.bundledSources()).pageWords
        let errors: [(PageError, PageWord)] = [
            (.expired, .errorExpired), (.invalid, .errorInvalid), (.form, .errorForm), (.weakPassword(.tooShort), .errorWeakTooShort),
            (.weakPassword(.tooLong), .errorWeakTooLong), (.weakPassword(.isTheAddress), .errorWeakIsTheAddress),
            (.addressTaken, .errorTaken), (.tooManyAttempts, .errorTooMany), (.unavailable, .errorUnavailable),
            (.used, .errorUsed), (.superseded, .errorSuperseded), (.otherBrowser, .errorOtherBrowser),
        ]
        for (error, word) in errors {
            let german = pages.render(.error(error), lang: "de-AT")
            let sentence = HTMLEscaping.escape(words.word(word, locale: "de"))
            #expect(german.locale == "de" && german.html.contains(#"<p id="error">\#(sentence)</p>"#), "\(error)")
            #expect(words.word(word, locale: "de") != words.word(word, locale: "en"), "\(word) is translated")
            #expect(german.html.contains("<h1>Dieser Link kann nicht verwendet werden</h1>"))
            let english = pages.render(.error(error), lang: "fr")
            #expect(english.locale == "en" && english.html.contains(HTMLEscaping.escape(words.word(word, locale: "en"))))
        }
    }

    @Test("an API error becomes the page error that says it in the page's words, never its English message")
    func errorsFromTheCatalogue() {
        #expect(PageError(.code(.expired)) == .expired)
        #expect(PageError(.code(.alreadyUsed)) == .used && PageError(.linkUsed(signedInHere: true)) == .used)
        #expect(PageError(.code(.superseded)) == .superseded)
        #expect(PageError(.code(.otherBrowser)) == .otherBrowser)
        #expect(PageError(.code(.badSignature)) == .invalid && PageError(.code(.stateChanged)) == .invalid)
        #expect(PageError(.invalidCode("x")) == .invalid)
        #expect(PageError(.weakPassword("English words", rule: .isTheAddress)) == .weakPassword(.isTheAddress))
        #expect(PageError(.emailExists) == .addressTaken)
        #expect(PageError(.tooManyAttempts(retryAfter: 3)) == .tooManyAttempts)
        #expect(PageError(.unavailable("disk")) == .unavailable)
        #expect(PageError(.userDisabled) == .invalid)
    }

    @Test("the sentence names the address in <strong>, and every value is escaped")
    func sentencesAndEscaping() throws {
        let pages = try pages()
        let form = PageForm(oobCode: "code\"><script>", csrf: "t'<")
        let confirm = pages.render(.confirm(.verifyAndChangeEmail, email: "o'neil@example.com", form: form, number: "472"), lang: "en").html
        #expect(confirm.contains("<p>Use <strong>o&#39;neil@example.com</strong> as the address of your account from now on.</p>"))
        #expect(confirm.contains(#"<input type="hidden" name="oobCode" value="code&quot;&gt;&lt;script&gt;">"#))
        #expect(confirm.contains(#"<input type="hidden" name="csrf" value="t&#39;&lt;">"#))
        #expect(confirm.contains(#"<input type="hidden" name="mode" value="verifyAndChangeEmail">"#))
        #expect(!confirm.contains("<script>"))
        // The number to type is shown as text, never as a value a form would send by itself.
        #expect(confirm.contains(#"To confirm, type this number: <strong class="code" id="confirm-number">472</strong>"#))
        #expect(confirm.contains(#"<input type="text" name="confirm" id="confirm""#) && !confirm.contains(#"value="472""#))
        #expect(!confirm.contains(#"id="retry""#))
        let retry = pages.render(.confirm(.recoverEmail, email: "o@example.com", form: form, number: "108", retry: true), lang: "de").html
        #expect(retry.contains(#"<p id="retry">Das war nicht die angezeigte Zahl."#) && retry.contains(">108</strong>"))
        let done = pages.render(.done(.resetPassword, email: "a@example.com", backLink: nil), lang: "de").html
        #expect(done.contains(#"<p id="done">Ihr Passwort wurde geändert. Sie können sich jetzt damit anmelden.</p>"#))
        #expect(!done.contains("<strong>") && !done.contains("class=\"button\""), "no address in the sentence, no back link")
        let back = pages.render(.done(.verifyEmail, email: "a@example.com", backLink: "https://app.example.com/x?a=1&b=2"), lang: "en").html
        #expect(back.contains(#"<p id="done"><strong>a@example.com</strong> is confirmed as your address.</p>"#))
        #expect(back.contains(#"<a class="button" href="https://app.example.com/x?a=1&amp;b=2">Back to the app</a>"#))
    }

    @Test("the sign-in page: the continue button and the code, or the hint without a continue URL, no code for PKCE")
    func signIn() throws {
        let pages = try pages()
        let full = pages.render(.signIn(continueLink: "https://app.example.com/f?mode=signIn&oobCode=C", code: "042137"), lang: "en").html
        #expect(full.contains(#"<a class="button" id="continue" href="https://app.example.com/f?mode=signIn&amp;oobCode=C">Continue to the app</a>"#))
        #expect(full.contains(#"<p class="code" id="code">042137</p>"#) && !full.contains("paste this link"))
        let bare = pages.render(.signIn(continueLink: nil, code: nil), lang: "de").html
        #expect(bare.contains("fügen Sie diesen Link ein") && !bare.contains(#"id="code""#) && !bare.contains(#"id="continue""#))
    }

    @Test("a used sign-in link in the browser that completed it: 'already signed in', a done page, in en and de")
    func signedIn() throws {
        let pages = try pages()
        let english = pages.render(.signedIn(backLink: nil), lang: "en").html
        #expect(english.contains("<h1>You are signed in</h1>"))
        #expect(english.contains(#"<p id="done">You are already signed in: this link was used in this browser. Go back to the app.</p>"#))
        #expect(!english.contains(#"id="error""#))
        let german = pages.render(.signedIn(backLink: "https://app.example.com/x"), lang: "de").html
        #expect(german.contains("<h1>Sie sind angemeldet</h1>") && german.contains("Sie sind bereits angemeldet"))
        #expect(german.contains(#"href="https://app.example.com/x""#))
    }

    @Test("the reset form has the password field with the policy's bounds, and its hidden fields")
    func resetForm() throws {
        let html = try pages().render(.resetPassword(PageForm(oobCode: "C", csrf: "T")), lang: "de").html
        #expect(html.contains(#"minlength="8" maxlength="256" required>"#))
        #expect(html.contains(#"<label for="newPassword">Neues Passwort (8 bis 256 Zeichen)</label>"#))
        for field in [#"name="mode" value="resetPassword""#, #"name="oobCode" value="C""#, #"name="csrf" value="T""#, #"name="lang" value="de""#] {
            #expect(html.contains(field), "\(field)")
        }
    }

    @Test("templates check knows the page templates: unknown variables, a mail's variable, missing fields, missing files, bad names")
    func checked() {
        var sources = MailFixtures.minimalSources()
        sources["en/page-error.html"] = "<p>{{message}} {{link}}</p>"
        sources["en/page-confirm.html"] = "<form>{{oobCode}} {{csrf}} {{confirmNumber}}</form>"
        sources["en/page-done.html"] = nil
        sources["en/page-sign-in.txt"] = "x"
        sources["de/page.html"] = "<main>{{heading}}</main>"
        sources["de/page-reset-password.html"] = "{{#oobCode}}"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.templateName) == [
            "de/page-reset-password.html", "de/page.html", "en/page-confirm.html", "en/page-done.html", "en/page-error.html",
            "en/page-sign-in.txt",
        ], "\(problems)")
        #expect(problems.map(\.code) == [.unclosedSection, .misplacedContentSlot, .missingVariable, .missingTemplate, .unknownVariable, .unknownTemplateName])
        #expect(problems.first { $0.templateName == "en/page-confirm.html" }?.detail == "page-confirm must use {{lang}}")
        #expect(problems.first { $0.templateName == "en/page-error.html" }?.detail.contains("'link' is not a template variable of page-error") == true)
        #expect(throws: TemplateErrors.self) { try TemplateSet(sources: sources).pageRenderer(branding: Branding(appName: "x")) }
    }

    @Test("a locale's own page template and layout win; its other pages are en's in its layout")
    func localeOverrides() throws {
        var sources = MailFixtures.minimalSources()
        sources["de/page.html"] = "<de>{{>content}}</de>"
        sources["de/page-error.html"] = "<p>DE {{message}}</p>"
        sources["de/page.strings"] = "error.invalid = ungültig"
        let pages = try TemplateSet(sources: sources).pageRenderer(branding: Branding(appName: "x"))
        #expect(pages.render(.error(.invalid), lang: "de").html == "<de><p>DE ungültig</p></de>")
        #expect(pages.render(.error(.expired), lang: "de").html == "<de><p>DE [error.expired]</p></de>", "a word de lacks is en's")
        #expect(pages.render(.signIn(continueLink: "L", code: "1"), lang: "de").html.hasPrefix("<de><p>sign-in "))
        #expect(pages.render(.error(.invalid), lang: "en").html == "<main><p>error [error.invalid]</p>\n</main>\n")
    }

    @Test("page variables are their own family: slots run from 0 in order, names are unique")
    func variableFamily() {
        #expect(PageVariable.allCases.map(\.rawValue) == Array(0..<PageVariable.allCases.count))
        #expect(MailVariable.allCases.map(\.rawValue) == Array(0..<MailVariable.allCases.count))
        #expect(Set(PageVariable.allCases.map(\.name)).count == PageVariable.allCases.count)
        #expect(PageVariable(name: "csrf") == .csrf && PageVariable(name: "link") == nil && MailVariable(name: "csrf") == nil)
        for kind in PageKind.allCases {
            #expect(kind.requiredVariables.isSubset(of: kind.variables) && PageKind.layoutVariables.isSubset(of: kind.variables))
        }
    }
}
