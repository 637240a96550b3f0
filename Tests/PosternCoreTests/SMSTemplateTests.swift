import Foundation
import PosternCore
import PosternTestSupport
import Testing

@Suite("SMS templates and segment counting")
struct SMSTemplateTests {
    @Test("GSM-7 counts septets (extension characters twice), UCS-2 counts UTF-16 units; 160/70 in one, 153/67 a part")
    func segments() {
        #expect(SMSSegments(String(repeating: "a", count: 160)) == SMSSegments(encoding: .gsm7, units: 160, parts: 1))
        #expect(SMSSegments(String(repeating: "a", count: 161)).parts == 2)
        #expect(SMSSegments(String(repeating: "a", count: 306)).parts == 2)
        #expect(SMSSegments(String(repeating: "a", count: 307)).parts == 3)
        #expect(SMSSegments("äöüßÄÖÜé@£$").encoding == .gsm7, "German umlauts and ß are in the basic set")
        #expect(SMSSegments("€").units == 2)
        #expect(SMSSegments(String(repeating: "€", count: 80)) == SMSSegments(encoding: .gsm7, units: 160, parts: 1))
        #expect(SMSSegments(String(repeating: "€", count: 81)).parts == 2)
        #expect(SMSSegments("{}[]~|^\\").units == 16)
        #expect(SMSSegments("ç").encoding == .ucs2, "lower-case ç is not in GSM-7 (only Ç)")
        #expect(SMSSegments(String(repeating: "я", count: 70)) == SMSSegments(encoding: .ucs2, units: 70, parts: 1))
        #expect(SMSSegments(String(repeating: "я", count: 71)).parts == 2)
        #expect(SMSSegments(String(repeating: "я", count: 134)).parts == 2)
        #expect(SMSSegments(String(repeating: "я", count: 135)).parts == 3)
        #expect(SMSSegments("😀").units == 2, "a character outside the BMP is two UTF-16 units")
    }

    static func renderer(appName: String, host: String = "auth.example.com") throws -> SMSRenderer {
        try TemplateSet(sources: BundledTemplates.sources()).smsRenderer(branding: Branding(appName: appName), host: host)
    }

    @Test("every bundled SMS ends with the origin-bound line @host #code, in its locale")
    func originBoundLine() throws {
        let renderer = try Self.renderer(appName: "Postern")
        for kind in SMSMessageKind.allCases where kind.carriesCode {
            for locale in ["en", "de"] {
                let rendered = renderer.render(SMSContent(kind: kind, code: "123456", localePreferences: [locale]))
                #expect(rendered.locale == locale)
                let lines = rendered.body.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.last == "@auth.example.com #123456", "\(locale)/\(kind)")
                #expect(rendered.body.contains("Postern"))
                #expect(rendered.body.components(separatedBy: "123456").count == 3, "the code in the text and in the last line")
            }
        }
        // A notice has no code, so no origin line: it names the account that asks.
        for locale in ["en", "de"] {
            let notice = renderer.render(SMSContent(kind: .transferAwaitingRelease, code: "", localePreferences: [locale], account: "a***@example.com"))
            #expect(notice.body.contains("a***@example.com") && !notice.body.contains("@auth.example.com") && !notice.body.contains("#"))
            #expect(notice.segments.encoding == .gsm7 && notice.segments.parts == 1, "\(locale): \(notice.segments.units) septets")
        }
        // An owner's claim code names the asking account (GSM-7 still); a holder's names none.
        let named = renderer.render(SMSContent(kind: .claimCode, code: "123456", localePreferences: ["en"], account: "a***@example.com"))
        #expect(named.body.hasPrefix("123456 is your Postern code to confirm this phone number for the account a***@example.com."))
        #expect(named.segments.encoding == .gsm7)
        let unnamed = renderer.render(SMSContent(kind: .claimCode, code: "123456", localePreferences: ["de"], accountWithoutAddress: true))
        #expect(unnamed.body.contains("für ein Konto ohne E-Mail-Adresse"))
        #expect(!renderer.render(SMSContent(kind: .claimCode, code: "123456", localePreferences: ["en"])).body.contains("account"))
        // A locale without SMS templates falls back to en.
        #expect(renderer.render(SMSContent(kind: .test, code: "000000", localePreferences: ["fr-ca"])).locale == "en")
    }

    /// With a 30-character host the origin line and its blank line take 40 of the 160 septets, the
    /// code 6 more, the words about 45: an app name of up to 60 GSM-7 characters fits one segment.
    /// The longest allowed `--app-name` (100) cannot (100 + 6 + 40 leaves 14 septets for words):
    /// those SMS take 2 parts (checked below, so the cost is known, not hidden). An app name outside
    /// GSM-7 (e.g. Japanese) makes the text UCS-2, 70 units a message: 2 parts as well.
    @Test("each bundled SMS with a 6-digit code fits one segment with an app name of up to 60 characters; the longest (100) takes 2")
    func oneSegment() throws {
        let host = "login.accounts.example-co.com"
        let longest = try Self.renderer(appName: String(repeating: "W", count: Settings.longestAppName), host: host)
        for kind in SMSMessageKind.allCases where kind.carriesCode {
            for locale in ["en", "de"] {
                let segments = longest.render(SMSContent(kind: kind, code: "123456", localePreferences: [locale])).segments
                #expect(segments.encoding == .gsm7)
                #expect(segments.parts == 2, "\(locale)/\(kind.templateName): \(segments.units) septets")
            }
        }
        for appName in ["Postern", String(repeating: "W", count: 60)] {
            let renderer = try Self.renderer(appName: appName, host: host)
            for kind in SMSMessageKind.allCases where kind.carriesCode {
                for locale in ["en", "de"] {
                    let rendered = renderer.render(SMSContent(kind: kind, code: "123456", localePreferences: [locale]))
                    let segments = rendered.segments
                    #expect(segments.encoding == .gsm7, "\(locale)/\(kind.templateName)")
                    #expect(segments.parts == 1, "\(locale)/\(kind.templateName) with a \(appName.count)-character app name: \(segments.units) septets")
                }
            }
        }
        let japanese = try Self.renderer(appName: String(repeating: "認", count: 20), host: host)
        let rendered = japanese.render(SMSContent(kind: .claimCode, code: "123456", localePreferences: ["en"]))
        #expect(rendered.segments.encoding == .ucs2)
        #expect(rendered.segments.parts == 2, "UCS-2: \(rendered.segments.units) units do not fit 70")
    }

    @Test("templates check knows the SMS files: a missing code and an unknown variable are problems; a missing en file is the built-in text")
    func checked() throws {
        var sources = try BundledTemplates.sources()
        #expect(TemplateSet(sources: sources).check().isEmpty)
        #expect(sources["en/sms-test.txt"] == SMSMessageKind.test.builtInSource, "the bundled en files are the built-in texts")
        #expect(sources["en/sms-claim-code.txt"] == SMSMessageKind.claimCode.builtInSource)
        #expect(sources["en/sms-sign-in-code.txt"] == SMSMessageKind.signInCode.builtInSource)
        sources["en/sms-test.txt"] = "{{appName}} {{url}}"
        sources["de/sms-claim-code.txt"] = "Dein Code für {{appName}}."
        sources["de/sms-sign-in-code.txt"] = "{{code}} {{url}}"
        let problems = TemplateSet(sources: sources).check()
        #expect(problems.contains { $0.templateName == "en/sms-test.txt" && $0.code == .unknownVariable })
        #expect(problems.contains { $0.templateName == "de/sms-claim-code.txt" && $0.code == .missingVariable })
        #expect(problems.contains { $0.templateName == "de/sms-sign-in-code.txt" })
        #expect(throws: TemplateErrors.self) { try TemplateSet(sources: sources).smsRenderer(branding: Branding(appName: "P"), host: "h") }
    }
}

extension SMSTemplateTests {
    @Test("a template directory without SMS files (made before SMS) still checks clean and renders the built-in text")
    func olderDirectory() throws {
        let sources = try BundledTemplates.sources().filter { !$0.key.contains("/sms-") }
        let set = TemplateSet(sources: sources)
        #expect(set.check().isEmpty)
        let rendered = try set.smsRenderer(branding: Branding(appName: "Acme"), host: "a.example").render(
            SMSContent(kind: .signInCode, code: "654321", localePreferences: ["de"]))
        #expect(rendered.body == "654321 is your Acme sign-in code. Do not share it.\n\n@a.example #654321")
    }
}
