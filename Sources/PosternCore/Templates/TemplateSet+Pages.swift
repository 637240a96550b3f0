/// The hosted page's template files while a ``TemplateSet`` is read: compiled one by one, then
/// checked for completeness and put into their layouts.
struct PageSources {
    /// What a page template file is.
    enum Entry {
        /// `LOCALE/page.html`.
        case layout(locale: String)
        /// `LOCALE/page-KIND.html`.
        case page(locale: String, kind: PageKind)
    }

    private var layouts: [String: CompiledTemplate<PageVariable>] = [:]
    private var bodies: [String: [PageKind: CompiledTemplate<PageVariable>]] = [:]
    private var problems: [TemplateProblem] = []
    /// The files given, compiled or not: a broken one is its own problem, not also a missing one.
    private var present: Set<String> = []

    /// What `name` is, or nil when it is no page template's name (then it may be a mail's).
    static func entry(named name: String) -> Entry? {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count == 2, !components[0].contains("."), let locale = MailLocale.normalized(String(components[0])) else {
            return nil
        }
        let file = String(components[1])
        if file == PageKind.layoutFileName { return .layout(locale: locale) }
        guard let kind = PageKind.allCases.first(where: { $0.fileName == file }) else { return nil }
        return .page(locale: locale, kind: kind)
    }

    /// Compiles one file; its problems are kept.
    mutating func add(_ source: String, name: String, entry: Entry) {
        present.insert(name)
        do {
            switch entry {
            case .layout(let locale):
                layouts[locale] = try CompiledTemplate.compileLayout(source, name: name, part: .html, declared: PageKind.layoutVariables)
            case .page(let locale, let kind):
                let template = try CompiledTemplate.compile(source, name: name, part: .html, declared: kind.variables, scope: "page-\(kind.rawValue)")
                for variable in kind.requiredVariables.subtracting(template.variables).sorted() {
                    problems.append(
                        TemplateProblem(.missingVariable, templateName: name, detail: "page-\(kind.rawValue) must use {{\(variable.name)}}"))
                }
                bodies[locale, default: [:]][kind] = template
            }
        } catch {
            problems.append(contentsOf: error.problems)
        }
    }

    /// Every locale's pages in its layout (else `en`'s), and the problems: those of the files,
    /// and a missing layout or kind in `en`, which every other locale falls back to.
    func assemble() -> (pages: [String: [PageKind: CompiledTemplate<PageVariable>]], problems: [TemplateProblem]) {
        var problems = self.problems
        let fallback = MailLocale.fallback
        if layouts[fallback] == nil, !present.contains("\(fallback)/\(PageKind.layoutFileName)") {
            problems.append(
                TemplateProblem(.missingTemplate, templateName: "\(fallback)/\(PageKind.layoutFileName)", detail: "the fallback locale needs the page layout"))
        }
        for kind in PageKind.allCases where bodies[fallback]?[kind] == nil && !present.contains("\(fallback)/\(kind.fileName)") {
            problems.append(
                TemplateProblem(.missingTemplate, templateName: "\(fallback)/\(kind.fileName)", detail: "the fallback locale needs every page"))
        }
        var pages: [String: [PageKind: CompiledTemplate<PageVariable>]] = [:]
        for locale in Set(bodies.keys).union(layouts.keys) {
            guard let layout = layouts[locale] ?? layouts[fallback] else { continue }
            // A locale with only a layout gets `en`'s pages in it.
            let own = bodies[locale] ?? [:]
            for kind in PageKind.allCases {
                guard let body = own[kind] ?? (layouts[locale] != nil ? bodies[fallback]?[kind] : nil) else { continue }
                pages[locale, default: [:]][kind] = layout.wrapping(body)
            }
        }
        return (pages, problems)
    }
}
