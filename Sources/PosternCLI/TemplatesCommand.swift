import Foundation
import PosternAssembly
import PosternCore
import PosternCrypto
import PosternMail

/// `postern templates check|render`.
struct TemplatesCommand: Subcommand {
    static let name = "templates"
    static let abstract = "check the mail templates, or render one with sample data"
    static let usage = """
        Usage: postern templates check [--templates DIR]
               postern templates render --action KIND --locale L [--format text|html|eml] [--templates DIR]
               postern templates render --page PAGE --locale L [--templates DIR]

        check   validates every template, of the mails and of the hosted page: syntax, unknown
                variables, missing required parts and words.
        render  previews one message (--action) or one hosted page (--page, as HTML) with sample
                data and the settings' --app-name and --support-email.
                KIND: \(MailMessageKind.allCases.map(\.rawValue).joined(separator: ", ")).
                PAGE: \(PageKind.allCases.map(\.rawValue).joined(separator: ", ")).

        """

    static let options: [OptionDeclaration] = [
        .value("action", "KIND", "render: the mail to preview"),
        .value("page", "PAGE", "render: the hosted page to preview, as HTML"),
        .value("locale", "L", "render: the language (such as de or pt-BR)"),
        .value("format", "FORMAT", "render: text (default), html or eml"),
    ]
    /// The templates and what they show: the directory, the branding, the links' origin and the
    /// From line of a rendered message.
    static let settings = ["templates", "public-url", "app-name", "support-email", "mail-from"]
    static let actions = ["check", "render"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count == 2, ["check", "render"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "templates needs check or render; see postern templates --help")
        }
        if arguments.words[1] == "render" {
            _ = try renderTarget()
            _ = try format()
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let directory = PosternRuntime.templateDirectory(settings.templates)
        let set: TemplateSet
        do {
            set = try TemplateDirectory.load(URL(fileURLWithPath: directory))
        } catch {
            throw CommandFailure(code: .badInput, message: "\(error)")
        }
        let problems = set.check()
        if arguments.words[1] == "check" {
            for problem in problems { print(problem) }
            if problems.isEmpty {
                print("\(directory): every template is valid.")
                return ExitCode.success.rawValue
            }
            printError("\(problems.count) problem(s) in \(directory)")
            return ExitCode.badInput.rawValue
        }
        let kind: MailMessageKind
        switch try renderTarget() {
        case .page(let page):
            do {
                let pages = try set.pageRenderer(branding: settings.branding)
                print(pages.render(.sample(of: page), lang: arguments.options["locale"]).html)
            } catch {
                throw CommandFailure(code: .badInput, message: "\(error)")
            }
            return ExitCode.success.rawValue
        case .mail(let mail):
            kind = mail
        }
        let renderer: MailRenderer
        do {
            renderer = try set.renderer(branding: settings.branding)
        } catch {
            throw CommandFailure(code: .badInput, message: "\(error)")
        }
        let now = Date()
        let message = MailMessage.sample(of: kind, now: now, publicURL: settings.publicURL)
        let preferences = [arguments.options["locale"]]
        switch try format() {
        case .text:
            let rendered = renderer.render(message, preferences: preferences, now: now)
            print("Subject: \(rendered.subject)\n\n\(rendered.text)")
        case .html:
            print(renderer.render(message, preferences: preferences, now: now).html)
        case .eml:
            let from = try settings.senderMailbox()
            let mail = try renderer.compose(message, preferences: preferences, now: now, from: from,
                                            messageIDToken: Base64URL.encode(try SecureRandom.bytes(18)))
            FileHandle.standardOutput.write(Data(mail.bytes))
        }
        return ExitCode.success.rawValue
    }

    /// What `render` writes.
    enum Format: String, CaseIterable {
        case text, html, eml
    }

    /// What `render` shows: a mail or a hosted page.
    enum Target {
        case mail(MailMessageKind)
        case page(PageKind)
    }

    /// `--action` or `--page` of `render`, read once for validate() and run().
    private func renderTarget() throws(CommandFailure) -> Target {
        if let name = arguments.options["page"] {
            guard arguments.options["action"] == nil else {
                throw CommandFailure(code: .usage, message: "give --action or --page, not both")
            }
            guard let page = PageKind(rawValue: name) else {
                throw CommandFailure(code: .usage, message: "--page must be one of \(PageKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return .page(page)
        }
        guard let name = arguments.options["action"], let kind = MailMessageKind(rawValue: name) else {
            throw CommandFailure(code: .usage, message: "--action must be one of \(MailMessageKind.allCases.map(\.rawValue).joined(separator: ", ")) (or --page PAGE)")
        }
        return .mail(kind)
    }

    /// `--format` of `render` (default text).
    private func format() throws(CommandFailure) -> Format {
        guard let format = Format(rawValue: arguments.options["format"] ?? "text") else {
            throw CommandFailure(code: .usage, message: "--format must be text, html or eml")
        }
        return format
    }
}
