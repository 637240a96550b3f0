/// All templates of an installation, mail and hosted pages, compiled and checked, from
/// (name → source text) entries.
///
/// Names are `LOCALE/KIND.PART`, e.g. `en/sign-in.subject`, `de/reset-password.html`, with KIND a
/// ``MailMessageKind`` raw value and PART `subject`, `txt` or `html`; plus optional layouts
/// `LOCALE/layout.txt` and `LOCALE/layout.html` that wrap every text or HTML part of their locale
/// at their `{{>content}}` (a locale without a layout uses `en`'s). `en` must have every kind;
/// another locale may leave kinds out (they fall back to `en`) but a kind it has must have all
/// three parts. The hosted page's templates are `LOCALE/page.html` (its layout) and
/// `LOCALE/page-KIND.html` (``PageKind``), see ``pageRenderer(branding:)``. Reading the files is
/// the loader's job (`TemplateDirectory` in PosternMail).
public struct TemplateSet: Sendable {
    private var problems: [TemplateProblem] = []
    private var kindsByLocale: [String: [MailMessageKind: KindTemplates]] = [:]
    private var wordsByLocale: [String: [MailWord: String]] = [:]
    private var pageWordsByLocale: [String: [PageWord: String]] = [:]
    /// The page templates of each locale that has any, layouts applied.
    var pagesByLocale: [String: [PageKind: CompiledTemplate<PageVariable>]] = [:]
    /// The SMS templates of each locale that has any (`LOCALE/sms-KIND.txt`).
    var smsByLocale: [String: [SMSMessageKind: CompiledTemplate<SMSVariable>]] = [:]

    /// Compiles every entry; problems are kept for ``check()``, never thrown here.
    public init(sources: [String: String]) {
        var bodies: [String: [MailMessageKind: [TemplatePart: CompiledTemplate<MailVariable>]]] = [:]
        var present: [String: [MailMessageKind: Set<TemplatePart>]] = [:]
        var layouts: [String: [TemplatePart: CompiledTemplate<MailVariable>]] = [:]
        var pages = PageSources()
        var sms = SMSSources()

        for (name, source) in sources.sorted(by: { $0.key < $1.key }) {
            if let locale = Self.wordsLocale(named: name, file: "words.strings") {
                let parsed = MailWords.parse(source, name: name)
                wordsByLocale[locale] = parsed.words
                problems.append(contentsOf: parsed.problems)
                continue
            }
            if let locale = Self.wordsLocale(named: name, file: "page.strings") {
                let parsed = PageWords.parse(source, name: name)
                pageWordsByLocale[locale] = parsed.words
                problems.append(contentsOf: parsed.problems)
                continue
            }
            if let entry = SMSSources.entry(named: name) {
                sms.add(source, name: name, locale: entry.locale, kind: entry.kind)
                continue
            }
            if let page = PageSources.entry(named: name) {
                pages.add(source, name: name, entry: page)
                continue
            }
            guard let entry = Self.entry(named: name) else {
                problems.append(
                    TemplateProblem(
                        .unknownTemplateName, templateName: name,
                        detail: "expected LOCALE/KIND.(subject|txt|html) or LOCALE/layout.(txt|html), with KIND one of "
                            + MailMessageKind.allCases.map(\.rawValue).joined(separator: ", ")
                            + "; or LOCALE/page.html or LOCALE/page-KIND.html, with KIND one of "
                            + PageKind.allCases.map(\.rawValue).joined(separator: ", ")
                            + "; or LOCALE/sms-KIND.txt, with KIND one of "
                            + SMSMessageKind.allCases.map { String($0.templateName.dropFirst(4)) }.joined(separator: ", ")))
                continue
            }
            do {
                switch entry.kind {
                case nil:
                    layouts[entry.locale, default: [:]][entry.part] = try CompiledTemplate.compileLayout(
                        source, name: name, part: entry.part, declared: MailMessageKind.commonVariables)
                case let kind?:
                    present[entry.locale, default: [:]][kind, default: []].insert(entry.part)
                    let template = try CompiledTemplate.compile(
                        source, name: name, part: entry.part, declared: kind.variables, scope: kind.rawValue)
                    let missing = kind.requiredVariables(in: entry.part).subtracting(template.variables)
                    for variable in missing.sorted() {
                        problems.append(
                            TemplateProblem(
                                .missingVariable, templateName: name,
                                detail: "\(kind.rawValue) \(entry.part.rawValue) must use {{\(variable.name)}}"))
                    }
                    bodies[entry.locale, default: [:]][kind, default: [:]][entry.part] = template
                }
            } catch {
                problems.append(contentsOf: error.problems)
            }
        }

        let fallbackWords = wordsByLocale[MailLocale.fallback] ?? [:]
        for word in MailWord.allCases where fallbackWords[word] == nil {
            problems.append(
                TemplateProblem(
                    .missingWord, templateName: "\(MailLocale.fallback)/words.strings",
                    detail: "the fallback locale needs every word: \(word.rawValue)"))
        }
        let fallbackPageWords = pageWordsByLocale[MailLocale.fallback] ?? [:]
        for word in PageWord.allCases where fallbackPageWords[word] == nil {
            problems.append(
                TemplateProblem(
                    .missingWord, templateName: "\(MailLocale.fallback)/page.strings",
                    detail: "the fallback locale needs every word: \(word.rawValue)"))
        }
        if present[MailLocale.fallback] == nil { present[MailLocale.fallback] = [:] }
        for (locale, kinds) in present.sorted(by: { $0.key < $1.key }) {
            let layout = layouts[locale] ?? layouts[MailLocale.fallback] ?? [:]
            let wanted = locale == MailLocale.fallback ? MailMessageKind.allCases : MailMessageKind.allCases.filter { kinds[$0] != nil }
            for kind in wanted {
                let have = kinds[kind] ?? []
                for part in TemplatePart.allCases where !have.contains(part) {
                    let reason = locale == MailLocale.fallback
                        ? "the fallback locale needs every part of every kind"
                        : "\(locale) has other parts of \(kind.rawValue), so it needs this one too"
                    problems.append(
                        TemplateProblem(
                            .missingTemplate, templateName: "\(locale)/\(kind.rawValue).\(part.fileExtension)", detail: reason))
                }
                guard let parts = bodies[locale]?[kind], let subject = parts[.subject], let text = parts[.text],
                    let html = parts[.html]
                else { continue }
                kindsByLocale[locale, default: [:]][kind] = KindTemplates(
                    subject: subject,
                    text: layout[.text]?.wrapping(text) ?? text,
                    html: layout[.html]?.wrapping(html) ?? html)
            }
        }
        let assembled = pages.assemble()
        pagesByLocale = assembled.pages
        problems.append(contentsOf: assembled.problems)
        let smsAssembled = sms.assemble()
        smsByLocale = smsAssembled.templates
        problems.append(contentsOf: smsAssembled.problems)
        problems.sort { ($0.templateName, $0.line ?? 0, $0.column ?? 0) < ($1.templateName, $1.line ?? 0, $1.column ?? 0) }
    }

    /// Every problem across all templates (syntax, unknown or missing variables, missing parts,
    /// stray names); empty when the set can be used. For `postern templates check` and start-up.
    public func check() -> [TemplateProblem] { problems }

    /// The locales that have templates, sorted.
    public var locales: [String] { kindsByLocale.keys.sorted() }

    /// A renderer over these templates, available only when ``check()`` finds nothing.
    ///
    /// - Throws: ``TemplateErrors`` with every problem when there is any; so a broken template
    ///   stops start-up and can never fail a send.
    public func renderer(branding: Branding) throws(TemplateErrors) -> MailRenderer {
        guard problems.isEmpty, let fallback = KindTable(kindsByLocale[MailLocale.fallback] ?? [:]) else {
            throw TemplateErrors(problems: problems)
        }
        return MailRenderer(branding: branding, kindsByLocale: kindsByLocale, fallback: fallback, words: MailWords(wordsByLocale))
    }

    private struct Entry {
        let locale: String
        let kind: MailMessageKind?
        let part: TemplatePart
    }

    /// The hosted page's words of every locale (complete in `en` when ``check()`` is empty).
    public var pageWords: PageWords { PageWords(pageWordsByLocale) }

    /// A renderer of the hosted pages over these templates and words, available only when
    /// ``check()`` finds nothing.
    ///
    /// - Throws: ``TemplateErrors`` with every problem when there is any (of mail or page
    ///   templates alike: one check for the whole directory), so a broken page template stops
    ///   start-up instead of failing a request.
    public func pageRenderer(branding: Branding) throws(TemplateErrors) -> PageRenderer {
        guard problems.isEmpty, let fallback = pagesByLocale[MailLocale.fallback],
            fallback.count == PageKind.allCases.count
        else { throw TemplateErrors(problems: problems) }
        return PageRenderer(branding: branding, templatesByLocale: pagesByLocale, fallback: fallback, words: pageWords)
    }

    /// A renderer of the SMS templates, its origin-bound line naming `host`, available only when
    /// ``check()`` finds nothing.
    /// - Throws: ``TemplateErrors`` with every problem when there is any.
    public func smsRenderer(branding: Branding, host: String) throws(TemplateErrors) -> SMSRenderer {
        guard problems.isEmpty, smsByLocale[MailLocale.fallback]?.count == SMSMessageKind.allCases.count else {
            throw TemplateErrors(problems: problems)
        }
        return SMSRenderer(branding: branding, host: host, templatesByLocale: smsByLocale)
    }

    /// The locale of a `LOCALE/FILE` entry, or nil for any other name.
    private static func wordsLocale(named name: String, file: String) -> String? {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 2, components[1] == file, !components[0].contains(".") else { return nil }
        return MailLocale.normalized(String(components[0]))
    }

    private static func entry(named name: String) -> Entry? {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 2, let locale = MailLocale.normalized(String(components[0])),
            !components[0].contains("."), let dot = components[1].lastIndex(of: "."),
            let part = TemplatePart(fileExtension: String(components[1][components[1].index(after: dot)...]))
        else { return nil }
        let base = String(components[1][..<dot])
        if base == "layout" {
            return part == .subject ? nil : Entry(locale: locale, kind: nil, part: part)
        }
        guard let kind = MailMessageKind(rawValue: base) else { return nil }
        return Entry(locale: locale, kind: kind, part: part)
    }
}

/// The three compiled parts of one kind in one locale, layouts applied.
struct KindTemplates: Sendable, Hashable {
    let subject: CompiledTemplate<MailVariable>
    let text: CompiledTemplate<MailVariable>
    let html: CompiledTemplate<MailVariable>
}

/// Templates for every kind, so a lookup cannot miss.
struct KindTable: Sendable {
    private let entries: [KindTemplates]

    /// A table from `kinds`, or nil when a kind is missing.
    init?(_ kinds: [MailMessageKind: KindTemplates]) {
        let entries = MailMessageKind.allCases.compactMap { kinds[$0] }
        guard entries.count == MailMessageKind.allCases.count else { return nil }
        self.entries = entries
    }

    subscript(kind: MailMessageKind) -> KindTemplates { entries[kind.ordinal] }
}

extension MailMessageKind {
    /// The position of the kind in `allCases`.
    var ordinal: Int {
        switch self {
        case .signIn: 0
        case .confirmSignUp: 1
        case .accountAlreadyExists: 2
        case .resetPassword: 3
        case .passwordChanged: 4
        case .verifyEmail: 5
        case .verifyAndChangeEmail: 6
        case .recoverEmail: 7
        case .noAccount: 8
        case .signInApproved: 9
        case .phoneTransferRequested: 10
        case .newSignIn: 11
        }
    }
}
