import Foundation
import Testing
@testable import PosternCore

@Suite("Bundled templates")
struct TemplateBundledTests {
    private func renderer() throws -> MailRenderer {
        try TemplateSet(sources: try MailFixtures.bundledSources())
            .renderer(branding: Branding(appName: "Postern", supportEmail: "help@example.com"))
    }

    @Test func bundledTemplatesPassCheck() throws {
        let set = TemplateSet(sources: try MailFixtures.bundledSources())
        #expect(set.check() == [], "\(set.check().map(\.description))")
        #expect(set.locales == ["de", "en"])
    }

    @Test("the hosted page has every word in en and de, a sentence per password rule, and de its own words")
    func pageWordsAreComplete() throws {
        let sources = try MailFixtures.bundledSources()
        let words = TemplateSet(sources: sources).pageWords
        #expect(words.locales == ["de", "en"])
        for locale in ["en", "de"] {
            let file = sources["\(locale)/page.strings"] ?? ""
            for word in PageWord.allCases {
                #expect(file.contains("\n\(word.rawValue) = "), "\(locale) lacks \(word.rawValue)")
            }
        }
        for rule in PasswordPolicy.Rule.allCases {
            #expect(PageWord(rawValue: "error.weak.\(rule.rawValue)") != nil, "\(rule)")
        }
        #expect(words.word(.errorWeakTooShort, locale: "de").hasPrefix("Dieses Passwort"))
        #expect(words.word(.errorWeakTooShort, locale: "de-at") == words.word(.errorWeakTooShort, locale: "de"))
        #expect(words.word(.errorWeakTooShort, locale: "fr") == words.word(.errorWeakTooShort, locale: "en"))
        #expect(words.locale(for: "de-CH".lowercased()) == "de" && words.locale(for: "fr") == "en")
    }

    @Test(arguments: MailMessageKind.allCases, ["en", "de"])
    func everyKindRendersCompletelyInEachLocale(kind: MailMessageKind, locale: String) throws {
        let message = MailMessage.sample(of: kind, now: MailFixtures.now)
        let mail = try renderer().render(message, preferences: [locale], now: MailFixtures.now)
        #expect(mail.locale == locale)
        #expect(!mail.subject.isEmpty && mail.subject.count < 120)
        #expect(kind == .signIn ? mail.subject.contains("123456") : mail.subject.contains("14:02 UTC"))
        for body in [mail.text, mail.html] {
            #expect(!body.contains("{{") && !body.contains("}}"))
            #expect(body.contains("Jane Doe"))
        }
        #expect(mail.text.contains(message.recipient.address) || kind == .verifyAndChangeEmail || kind == .recoverEmail)
        if let action = kind.action {
            #expect(mail.text.contains("mode=\(action.rawValue)&oobCode="))
            #expect(mail.html.contains("mode=\(action.rawValue)&amp;oobCode="))
            #expect(mail.text.contains(kind == .signIn ? "10" : kind == .resetPassword ? "60" : "3"))
        }
        if kind == .signIn {
            #expect(mail.text.contains("    123456\n"))
            #expect(mail.html.contains(">123456</p>"))
        }
        // HTML that common clients render and that loads nothing.
        let html = mail.html.lowercased()
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<table role=\"presentation\""))
        for banned in ["<script", "<img", "<link", "<style", "@import", "url(", "src=", "javascript:", "<iframe", "<form"] {
            #expect(!html.contains(banned), "\(banned) in \(kind) \(locale)")
        }
        #expect(mail.html.contains("help@example.com"))
    }

    @Test func optionalPartsFollowTheirValues() throws {
        let renderer = try renderer()
        var message = MailMessage.sample(of: .passwordChanged, now: MailFixtures.now)
        let withLink = renderer.render(message, preferences: ["en"], now: MailFixtures.now)
        #expect(withLink.text.contains("reset your password now"))
        message.content = .passwordChanged(resetLink: nil)
        message.displayName = nil
        let without = renderer.render(message, preferences: ["en"], now: MailFixtures.now)
        #expect(!without.text.contains("reset your password now"))
        #expect(without.text.hasPrefix("Hello,\n"))
        #expect(without.html.contains(">Hello,</p>"))
    }

    @Test func subjectsDifferPerMail() throws {
        let renderer = try renderer()
        let first = MailMessage.sample(of: .signIn, now: MailFixtures.now)
        var second = first
        second.content = .signIn(link: "https://auth.example.com/x", code: "654321", expiresAt: MailFixtures.now)
        #expect(renderer.render(first, preferences: ["en"], now: MailFixtures.now).subject
            != renderer.render(second, preferences: ["en"], now: MailFixtures.now).subject)
        let reset = MailMessage.sample(of: .resetPassword, now: MailFixtures.now)
        var later = reset
        later.requestedAt = MailFixtures.now.addingTimeInterval(60)
        let subjects = [reset, later].map { renderer.render($0, preferences: ["en"], now: MailFixtures.now).subject }
        #expect(subjects == ["Reset your Postern password (requested 14:02 UTC)", "Reset your Postern password (requested 14:03 UTC)"])
        let german = renderer.render(reset, preferences: ["de"], now: MailFixtures.now).subject
        #expect(german == "Ihr Postern-Passwort zurücksetzen (angefordert um 14:02 UTC)")
    }

    @Test func hostileValuesAreEscapedInHTMLAndCannotAddLines() throws {
        var message = MailMessage.sample(of: .verifyEmail, now: MailFixtures.now)
        message.displayName = "<script>alert('x')</script>\r\nBcc: victim@example.com"
        let mail = try renderer().render(message, preferences: ["en"], now: MailFixtures.now)
        #expect(!mail.html.contains("<script>"))
        #expect(mail.html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;  Bcc: victim@example.com"))
        #expect(mail.text.contains("Hello <script>alert('x')</script>  Bcc: victim@example.com,"))
    }
}
