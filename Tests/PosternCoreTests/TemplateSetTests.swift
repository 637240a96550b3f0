import Foundation
import Testing
@testable import PosternCore

@Suite("Template set: check and locale fallback")
struct TemplateSetTests {
    private let branding = Branding(appName: "Postern")

    @Test func minimalCompleteSetHasNoProblems() throws {
        let set = TemplateSet(sources: MailFixtures.minimalSources())
        #expect(set.check() == [])
        #expect(set.locales == ["en"])
        _ = try set.renderer(branding: branding)
    }

    @Test func missingFallbackPartsAreProblemsAndBlockTheRenderer() {
        var sources = MailFixtures.minimalSources()
        sources["en/no-account.html"] = nil
        sources["en/sign-in.subject"] = nil
        let set = TemplateSet(sources: sources)
        #expect(set.check().map(\.templateName) == ["en/no-account.html", "en/sign-in.subject"])
        #expect(set.check().allSatisfy { $0.code == .missingTemplate })
        #expect(throws: TemplateErrors.self) { try set.renderer(branding: branding) }
    }

    @Test func emptySetNeedsEveryFallbackPartAndWord() {
        let problems = TemplateSet(sources: [:]).check()
        #expect(problems.count == MailMessageKind.allCases.count * 3 + MailWord.allCases.count + PageWord.allCases.count
            + PageKind.allCases.count + 1)
        #expect(problems.filter { $0.code == .missingWord }.count == MailWord.allCases.count + PageWord.allCases.count)
    }

    @Test func wordsFilesAreChecked() {
        var sources = MailFixtures.minimalSources()
        sources["de/words.strings"] = "# comment\n\nminute.one = Minute\nminute.others = Minuten\nno equals sign\n"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.code) == [.unknownWord, .unknownWord])
        #expect(problems.map(\.line) == [4, 5])
        #expect(problems.allSatisfy { $0.templateName == "de/words.strings" })
    }

    @Test func otherLocaleMayOmitKindsButNotParts() {
        var sources = MailFixtures.minimalSources()
        sources["de/sign-in.subject"] = "{{code}} Anmeldung"
        sources["de/sign-in.txt"] = "{{link}} {{code}}"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.templateName) == ["de/sign-in.html"])
        #expect(problems.first?.code == .missingTemplate)
    }

    @Test func unknownVariableIsCaughtByCheckWithPlace() {
        var sources = MailFixtures.minimalSources()
        sources["en/reset-password.txt"] = "Reset:\n\n  {{link}} ({{code}})\n"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.count == 1)
        #expect(problems.first?.code == .unknownVariable)
        #expect(problems.first?.description.hasPrefix("en/reset-password.txt:3:13: unknown variable: 'code' is not a variable of reset-password") == true, "\(problems)")
    }

    @Test func problemsFromEveryTemplateAreReportedTogether() {
        var sources = MailFixtures.minimalSources(locales: ["en", "de"])
        sources["en/verify-email.html"] = "{{#link}}"
        sources["de/verify-email.txt"] = "{{link}} {{oops}}"
        sources["de/sign-in.html"] = "<p>{{code}}</p>"
        sources["en/sign-inn.txt"] = "x"
        sources["README.md"] = "x"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.templateName) == ["README.md", "de/sign-in.html", "de/verify-email.txt", "en/sign-inn.txt", "en/verify-email.html"])
        #expect(problems.map(\.code) == [.unknownTemplateName, .missingVariable, .unknownVariable, .unknownTemplateName, .unclosedSection])
    }

    @Test func subjectsMustMakeEachMailDistinct() {
        var sources = MailFixtures.minimalSources()
        sources["en/sign-in.subject"] = "Your sign-in code"
        sources["en/reset-password.subject"] = "Reset your password"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.code) == [.missingVariable, .missingVariable])
        #expect(problems.map(\.detail) == ["reset-password subject must use {{requestedAt}}", "sign-in subject must use {{code}}"])
    }

    @Test func layoutsMayUseOnlyCommonVariables() {
        var sources = MailFixtures.minimalSources()
        sources["en/layout.txt"] = "{{>content}}\n{{link}}\n"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.map(\.code) == [.unknownVariable])
        #expect(problems.first?.line == 2)
    }

    @Test func localeCandidatesShortenEachPreferenceThenFallBack() {
        #expect(MailLocale.candidates(["de-AT"]) == ["de-at", "de", "en"])
        #expect(MailLocale.candidates(["fr_CA.UTF-8", "de"]) == ["fr-ca", "fr", "de", "en"])
        #expect(MailLocale.candidates([nil, "", "../../etc", "zh-Hant-TW"]) == ["zh-hant-tw", "zh-hant", "zh", "en"])
        #expect(MailLocale.candidates(["EN-gb"]) == ["en-gb", "en"])
    }

    @Test func renderPicksRequestThenAccountThenEnglish() throws {
        var sources = MailFixtures.minimalSources(locales: ["en", "de", "pt-br"])
        for part in TemplatePart.allCases { sources["de/no-account.\(part.fileExtension)"] = nil }
        let renderer = try TemplateSet(sources: sources).renderer(branding: branding)
        #expect(renderer.locales == ["de", "en", "pt-br"])
        let signIn = MailMessage.sample(of: .signIn, now: MailFixtures.now)
        func locale(_ preferences: [String?], _ message: MailMessage = signIn) -> String {
            renderer.render(message, preferences: preferences, now: MailFixtures.now).locale
        }
        #expect(locale(["de-AT"]) == "de")
        #expect(locale(["fr", "de-CH"]) == "de")
        #expect(locale(["pt-BR", "de"]) == "pt-br")
        #expect(locale(["pt", "de"]) == "de")
        #expect(locale(["fr"]) == "en")
        #expect(locale([nil, nil]) == "en")
        #expect(locale(["de"], MailMessage.sample(of: .noAccount, now: MailFixtures.now)) == "en")
        let rendered = renderer.render(signIn, preferences: ["de-AT"], now: MailFixtures.now)
        #expect(rendered.subject == "[de] sign-in 123456")
    }

    @Test func expiryIsSaidInTheMailsLanguageFromTheTimeLeft() throws {
        var sources = MailFixtures.minimalSources(locales: ["en", "de"])
        for locale in ["en", "de"] {
            sources["\(locale)/reset-password.txt"] = "{{link}} {{expiresIn}} / {{expiresInMinutes}}"
        }
        // The German units come from de/words.strings, not from Swift.
        sources["de/words.strings"] = """
            minute.one = Minute
            minute.other = Minuten
            hour.one = Stunde
            hour.other = Stunden
            day.one = Tag
            day.other = Tage
            """
        let renderer = try TemplateSet(sources: sources).renderer(branding: branding)
        func text(_ seconds: Double, _ locale: String, sentAfter delay: Double = 0) -> String {
            let message = MailMessage(
                content: .resetPassword(link: "L", expiresAt: MailFixtures.now.addingTimeInterval(seconds)),
                recipient: MailFixtures.address("a"), requestedAt: MailFixtures.now)
            return renderer.render(message, preferences: [locale], now: MailFixtures.now.addingTimeInterval(delay)).text
        }
        #expect(text(600, "en") == "L 10 minutes / 10")
        #expect(text(599.6, "de") == "L 10 Minuten / 10")
        #expect(text(600, "en", sentAfter: 300) == "L 5 minutes / 5")
        #expect(text(60, "de") == "L 1 Minute / 1")
        #expect(text(3_600, "en") == "L 60 minutes / 60")
        #expect(text(7_200, "de") == "L 2 Stunden / 120")
        #expect(text(86_400, "en") == "L 24 hours / 1440")
        #expect(text(259_200, "de") == "L 3 Tage / 4320")
        #expect(text(10, "en", sentAfter: 30) == "L 1 minute / 1")
    }

    @Test func contextCarriesEachKindsValues() throws {
        let renderer = try TemplateSet(sources: MailFixtures.minimalSources())
            .renderer(branding: Branding(appName: "Acme", supportEmail: "help@acme.test"))
        let message = MailMessage.sample(of: .recoverEmail, now: MailFixtures.now)
        let context = renderer.context(for: message, locale: "en", now: MailFixtures.now)
        #expect(context[.appName] == "Acme")
        #expect(context[.supportEmail] == "help@acme.test")
        #expect(context[.email] == "jane@old.example.com")
        #expect(context[.oldEmail] == "jane@old.example.com")
        #expect(context[.newEmail] == "jane.doe@example.com")
        #expect(context[.requestedAt] == "14:02 UTC")
        #expect(context[.requestedDate] == "2025-05-04")
        #expect(context[.displayName] == "Jane Doe")
        #expect(context[.code] == nil)
        #expect(context[.link]?.contains("mode=recoverEmail") == true)
    }

    @Test func everyKindDeclaresWhatItMustUse() {
        for kind in MailMessageKind.allCases {
            for part in TemplatePart.allCases {
                #expect(kind.requiredVariables(in: part).isSubset(of: kind.variables))
            }
            #expect(MailMessageKind.commonVariables.isSubset(of: kind.variables))
        }
    }
}
