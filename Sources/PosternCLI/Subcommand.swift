import PosternAssembly

/// One subcommand, in swift-argument-parser's shape: a name and a one-line abstract (the top
/// help lists them), the usage text of its `--help`, the options and settings it takes (its
/// `--help` lists them, and any other option is a usage error), `validate()` for every usage
/// error before anything is opened (a bad setting exits 64 without touching the database), and
/// `run()`.
protocol Subcommand {
    /// The word after `postern`.
    static var name: String { get }
    /// One line for `postern --help`.
    static var abstract: String { get }
    /// The prose of `postern NAME --help` (the option list made from `options` and `settings`
    /// is appended).
    static var usage: String { get }
    /// The command's own options, for its parsing and its help.
    static var options: [OptionDeclaration] { get }
    /// The flags of the settings the command reads (``SettingsGroup/flags(_:)``).
    static var settings: [String] { get }
    /// The words after NAME that name an action (`users import`), for the messages.
    static var actions: [String] { get }

    init(arguments: ParsedArguments)
    /// Throws the usage error a person can fix, or nothing.
    func validate() throws(CommandFailure)
    /// Does the work; returns the exit code.
    func run() throws -> Int32
}

extension Subcommand {
    /// No options of its own (`serve` takes settings only).
    static var options: [OptionDeclaration] { [] }
    /// No action words.
    static var actions: [String] { [] }
}

/// Every subcommand, in the order `postern --help` lists them.
var subcommands: [any Subcommand.Type] {
    [
        ServeCommand.self, SendLinkCommand.self, HandleLinkCommand.self, TemplatesCommand.self, KeysCommand.self,
        OutboxCommand.self, BouncesCommand.self, SMSCommand.self, UsersCommand.self, PhonesCommand.self, WebhooksCommand.self,
        SuppressionsCommand.self, OIDCCommand.self, MaintenanceCommand.self, SettingsCommand.self, CheckConfigCommand.self,
    ]
}

/// What a command line asks for, decided without running anything: for `main` and its tests.
enum Invocation {
    /// Print this (help) and exit 0.
    case help(String)
    /// Run this command.
    case run(any Subcommand)

    /// Parses and validates `arguments` (without the program name).
    /// - Throws: `CommandFailure` with exit code 64 for every usage error.
    static func parse(_ arguments: [String]) throws(CommandFailure) -> Invocation {
        if arguments == ["--version"] { return .help(versionText) }
        let parsed = ParsedArguments(arguments)
        guard let word = parsed.words.first, word != "help" else {
            if parsed.switches.contains("help") || parsed.words.first == "help" { return .help(topUsage + settingsHelp()) }
            throw CommandFailure(code: .usage, message: topUsage + "\nGive a command; see postern --help.")
        }
        guard let command = subcommands.first(where: { $0.name == word }) else {
            throw CommandFailure(code: .usage, message: "unknown command \(word.debugDescription); see postern --help")
        }
        if parsed.switches.contains("help") {
            return .help(command.usage + (command.usage.hasSuffix("\n\n") ? "" : "\n") + command.optionsHelp)
        }
        try command.checkOptions(parsed)
        if let name = parsed.missingValue { throw CommandFailure(code: .usage, message: "--\(name) needs a value") }
        let instance = command.init(arguments: parsed)
        try instance.validate()
        return .run(instance)
    }

    /// `postern --version`: the release, the git commit it was built from, and the schema versions
    /// it migrates a database to (an older postern refuses a database a newer one migrated).
    static var versionText: String {
        let schema = PosternStorage.schemaVersions
        return """
            postern \(BuildStamp.version)
            commit \(BuildStamp.commit)
            schema \(schema.sqlite) (SQLite), \(schema.postgres) (PostgreSQL)
            """
    }

    /// `postern --help`: made from the subcommands' names and abstracts.
    static var topUsage: String {
        let width = (subcommands.map { $0.name.count }.max() ?? 0) + 2
        let lines = subcommands.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.abstract }
        return """
            postern — email sign-in links, codes and password resets, on your own server.

            Usage: postern COMMAND [options]

            Commands:
            \(lines.joined(separator: "\n"))

            postern --version prints the release, its git commit and its schema version.
            Every command takes --help; postern COMMAND --help lists its options and the settings
            below that it reads (another command's option is a usage error).
            Exit codes: 0 success, 64 usage, 65 bad input, 69 a dependency is down, 70 internal, 78 check-config found a problem.


            """
    }
}
