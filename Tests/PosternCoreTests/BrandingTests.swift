import Foundation
import Testing
@testable import PosternCore

/// `--app-name` and `--support-email` in every mail and hosted page: escaped in HTML, as given in
/// text, and a support sentence only when there is an address.
@Suite("Branding in mails and pages")
struct BrandingTests {
    static let hostileName = "A&B <Co>"
    static let escapedName = "A&amp;B &lt;Co&gt;"

    private func mails(_ branding: Branding) throws -> MailRenderer {
        try TemplateSet(sources: try MailFixtures.bundledSources()).renderer(branding: branding)
    }

    @Test("every mail in every locale names the app: escaped in HTML, as given in the text part",
          arguments: MailMessageKind.allCases, ["en", "de"])
    func appNameInEveryMail(kind: MailMessageKind, locale: String) throws {
        let renderer = try mails(Branding(appName: Self.hostileName, supportEmail: "help@acme.test"))
        let mail = renderer.render(MailMessage.sample(of: kind, now: MailFixtures.now), preferences: [locale], now: MailFixtures.now)
        #expect(mail.html.contains(Self.escapedName), "the layout's header names the app")
        #expect(!mail.html.contains(Self.hostileName), "never unescaped in HTML")
        #expect(mail.html.contains("<title>\(Self.escapedName)</title>"))
        #expect(mail.html.contains("help@acme.test") && mail.text.contains("help@acme.test"))
        if mail.text.contains("A&") { #expect(mail.text.contains(Self.hostileName)) }
        #expect(!mail.text.contains("&amp;"), "the text part is not escaped")
    }

    @Test("without a support address no mail says where to write, and nothing of the tag shows",
          arguments: MailMessageKind.allCases, ["en", "de"])
    func noSupportAddress(kind: MailMessageKind, locale: String) throws {
        let mail = try mails(Branding(appName: "Acme")).render(
            MailMessage.sample(of: kind, now: MailFixtures.now), preferences: [locale], now: MailFixtures.now)
        for body in [mail.text, mail.html] {
            #expect(!body.contains("Questions?") && !body.contains("Fragen?") && !body.contains("write to") && !body.contains("schreiben Sie sofort"))
            #expect(!body.contains("{{") && !body.contains("mailto:"))
        }
    }

    @Test("subjects carry the app name as given (the MIME builder encodes the header)")
    func subjects() throws {
        let renderer = try mails(Branding(appName: "Zürich & Co"))
        let reset = renderer.render(MailMessage.sample(of: .resetPassword, now: MailFixtures.now), preferences: ["en"], now: MailFixtures.now)
        #expect(reset.subject == "Reset your Zürich & Co password (requested 14:02 UTC)")
        let mime = try MimeMessage(
            reset, from: MailMailbox(MailFixtures.address("no-reply"), displayName: "Zürich & Co"),
            to: MailMailbox(MailFixtures.address("jane")), date: MailFixtures.now, messageIDToken: "brandTest_0123")
        let headers = Dictionary(MailFixtures.headers(of: mime.bytes()), uniquingKeysWith: { a, _ in a })
        let subject = try #require(headers["Subject"])
        #expect(subject.hasPrefix("=?utf-8?q?"), "non-ASCII: encoded words")
        #expect(MailFixtures.decodeEncodedWords(subject) == reset.subject)
        #expect(headers["From"]?.contains("<no-reply@example.com>") == true && headers["From"]?.contains("=?utf-8?q?") == true)
    }

    @Test("every page in every locale names the app in its title, heading area and footer, escaped",
          arguments: PageKind.allCases, ["en", "de"])
    func appNameOnEveryPage(kind: PageKind, locale: String) throws {
        let pages = try TemplateSet(sources: try MailFixtures.bundledSources())
            .pageRenderer(branding: Branding(appName: Self.hostileName, supportEmail: "help@acme.test"))
        let page = pages.render(.sample(of: kind), lang: locale)
        #expect(page.locale == locale)
        #expect(page.html.contains("<html lang=\"\(locale)\">"))
        #expect(page.html.contains("<title>\(Self.escapedName) – "))
        #expect(page.html.contains(#"<p class="product" id="product">\#(Self.escapedName)</p>"#))
        #expect(page.html.contains(#"<a href="mailto:help@acme.test">help@acme.test</a>"#))
        #expect(!page.html.contains(Self.hostileName) && !page.html.contains("{{"))
        let plain = try TemplateSet(sources: try MailFixtures.bundledSources()).pageRenderer(branding: Branding(appName: "Acme"))
            .render(.sample(of: kind), lang: locale)
        #expect(!plain.html.contains("mailto:") && plain.html.contains("<footer id=\"footer\"><p>Acme</p></footer>"))
    }
}
