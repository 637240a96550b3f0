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

        check   validates every template: syntax, unknown variables, missing required parts.
        render  previews one message with sample data. KIND: \(MailMessageKind.allCases.map(\.rawValue).joined(separator: ", ")).

        """

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count == 2, ["check", "render"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "templates needs check or render; see postern templates --help")
        }
        if arguments.words[1] == "render" {
            _ = try renderKind()
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
        let kind = try renderKind()
        let renderer: MailRenderer
        do {
            renderer = try set.renderer(branding: MailBranding(appName: "Postern"))
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
            let from = try MailMailbox.parse(settings.mailFrom)
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

    /// `--action` of `render`, read once for validate() and run().
    private func renderKind() throws(CommandFailure) -> MailMessageKind {
        guard let name = arguments.options["action"], let kind = MailMessageKind(rawValue: name) else {
            throw CommandFailure(code: .usage, message: "--action must be one of \(MailMessageKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }

    /// `--format` of `render` (default text).
    private func format() throws(CommandFailure) -> Format {
        guard let format = Format(rawValue: arguments.options["format"] ?? "text") else {
            throw CommandFailure(code: .usage, message: "--format must be text, html or eml")
        }
        return format
    }
}
