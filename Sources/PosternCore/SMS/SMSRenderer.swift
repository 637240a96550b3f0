import Foundation

/// Renders SMS from the checked templates: the locale picked as mail's is, the text trimmed, then
/// the origin-bound line `@host #123456` that browsers' and phones' one-time-code autofill
/// (WebOTP, iOS) binds to the site, always last and never left to a template (a notice without a
/// code has none).
public struct SMSRenderer: Sendable {
    let branding: Branding
    /// The public URL's host (`auth.example.com`).
    public let host: String
    let templatesByLocale: [String: [SMSMessageKind: CompiledTemplate<SMSVariable>]]

    /// What a rendered SMS is.
    public struct Rendered: Sendable, Hashable {
        public let body: String
        public let locale: String
        public var segments: SMSSegments { SMSSegments(body) }
    }

    /// `content` as text. The fallback locale has every kind (``TemplateSet/smsRenderer(branding:host:)``
    /// checks), so this cannot fail.
    public func render(_ content: SMSContent, expiresInMinutes: Int64 = 10) -> Rendered {
        let candidates = MailLocale.candidates(content.localePreferences)
        let locale = candidates.first { templatesByLocale[$0]?[content.kind] != nil } ?? MailLocale.fallback
        var context = TemplateContext<SMSVariable>()
        context[.appName] = branding.appName
        context[.code] = content.code
        context[.expiresInMinutes] = String(expiresInMinutes)
        context[.link] = content.link
        context[.account] = content.account
        context[.accountWithoutAddress] = content.accountWithoutAddress ? "yes" : nil
        let text = templatesByLocale[locale]?[content.kind]?.render(context) ?? content.code
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard content.kind.carriesCode else { return Rendered(body: trimmed, locale: locale) }
        return Rendered(body: "\(trimmed)\n\n@\(host) #\(content.code)", locale: locale)
    }
}

/// The SMS template files while a ``TemplateSet`` is read.
struct SMSSources {
    private var templates: [String: [SMSMessageKind: CompiledTemplate<SMSVariable>]] = [:]
    private var problems: [TemplateProblem] = []
    private var present: Set<String> = []

    /// The locale and kind of `LOCALE/sms-KIND.txt`, or nil for any other name.
    static func entry(named name: String) -> (locale: String, kind: SMSMessageKind)? {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 2, !components[0].contains("."), let locale = MailLocale.normalized(String(components[0])),
            let kind = SMSMessageKind.allCases.first(where: { $0.fileName == components[1] })
        else { return nil }
        return (locale, kind)
    }

    /// Compiles one file; its problems are kept.
    mutating func add(_ source: String, name: String, locale: String, kind: SMSMessageKind) {
        present.insert(name)
        do {
            let template = try CompiledTemplate.compile(
                source, name: name, part: .text, declared: SMSMessageKind.variables, scope: kind.templateName)
            for variable in kind.requiredVariables.subtracting(template.variables).sorted() {
                problems.append(TemplateProblem(.missingVariable, templateName: name, detail: "\(kind.templateName) must use {{\(variable.name)}}"))
            }
            templates[locale, default: [:]][kind] = template
        } catch {
            problems.append(contentsOf: error.problems)
        }
    }

    /// The templates and the problems of the files. A kind `en` leaves out is the built-in text
    /// (``SMSMessageKind/builtInSource``, the same as the bundled `templates/en`), so a template
    /// directory made before SMS existed still starts.
    func assemble() -> (templates: [String: [SMSMessageKind: CompiledTemplate<SMSVariable>]], problems: [TemplateProblem]) {
        var templates = self.templates
        let fallback = MailLocale.fallback
        for kind in SMSMessageKind.allCases where templates[fallback]?[kind] == nil && !present.contains("\(fallback)/\(kind.fileName)") {
            let name = "\(fallback)/\(kind.fileName)"
            if let template = try? CompiledTemplate<SMSVariable>.compile(
                kind.builtInSource, name: name, part: .text, declared: SMSMessageKind.variables, scope: kind.templateName)
            {
                templates[fallback, default: [:]][kind] = template
            }
        }
        return (templates, problems)
    }
}
