import PosternCore

/// One option of a command: its name, the placeholder of its value (nil for a switch, which
/// takes none) and its line in the command's `--help`. Parsing, the check that a command line
/// gives only its command's options, and the help's option list are all made from these.
struct OptionDeclaration: Sendable {
    /// The name without the dashes.
    let name: String
    /// What the value is called in `--help` (`ADDR`, `N`), or nil for a switch.
    let placeholder: String?
    /// One line for `--help`.
    let help: String

    /// A switch: `--name`, no value.
    static func flag(_ name: String, _ help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, placeholder: nil, help: help)
    }

    /// An option with a value: `--name VALUE` or `--name=VALUE`.
    static func value(_ name: String, _ placeholder: String, _ help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, placeholder: placeholder, help: help)
    }

    /// `--name PLACEHOLDER`, as the help shows it.
    var synopsis: String { "--\(name)" + (placeholder.map { " \($0)" } ?? "") }

    /// The options every command takes.
    static let common: [OptionDeclaration] = [
        .flag("help", "print this help (also -h)"),
        .value("config", "FILE", "read settings from this JSON file, keys being the flag names (POSTERN_CONFIG)"),
    ]
}

/// The settings a command reads, by what reads them: a command declares the groups it opens
/// (its `settings`), so a setting it would ignore is refused on its command line. The
/// environment and the `--config` file are shared by every command and are not restricted.
enum SettingsGroup: CaseIterable {
    /// The database and the master key: every command that opens the store.
    case storage
    /// What the flows read (`AuthConfiguration`, the password hasher, retention): every command
    /// that reads or changes accounts, the outbox or phones.
    case flows
    /// Mail and SMS delivery, templates and branding: the commands that send (`PosternRuntime`).
    case delivery
    /// The daemon's listeners, proxies, app links and housekeeping loop: `postern serve` only.
    case daemon

    /// The settings of the delivery group; every other setting not listed below is a flow's.
    private static let deliveryFlags: Set<String> = [
        "smtp-url", "smtp-ca-file", "smtp-password-file", "mail-http-secret-file", "mail-from", "templates", "app-name",
        "support-email", "workers", "webhook-secret-file", "sms-transport", "sms-from", "sms-twilio-messaging-service-sid",
        "sms-twilio-auth-token-file", "sms-twilio-base-url", "sms-json-secret-file", "sms-ca-file", "sms-timeout",
    ]
    private static let storageFlags: Set<String> = ["database", "master-key-file", "pg-connections", "pg-poll-only"]
    private static let daemonFlags: Set<String> = [
        "listen", "trust-proxy", "trusted-proxies", "connections-per-ip", "request-timeout", "metrics-listen", "admin-token",
        "apple-app-ids", "android-apps", "housekeeping-interval", "identity-providers", "provider-ca-file",
        "ses-topic-arns", "sns-certificate-hosts", "sns-ca-file", "postmark-webhook-credentials-file", "delivery-webhook-secret-file",
    ]

    /// The group of the setting `flag`.
    static func of(_ flag: String) -> SettingsGroup {
        if storageFlags.contains(flag) { return .storage }
        if deliveryFlags.contains(flag) { return .delivery }
        if daemonFlags.contains(flag) { return .daemon }
        return .flows
    }

    /// The flags of the settings in `groups`, in the order of `Settings.descriptors`.
    static func flags(_ groups: SettingsGroup...) -> [String] {
        Settings.descriptors.map(\.flag).filter { groups.contains(of($0)) }
    }
}

extension Subcommand {
    /// Every option name this command accepts: its own, its settings and the common ones.
    static var acceptedOptions: Set<String> {
        Set(options.map(\.name) + settings + OptionDeclaration.common.map(\.name))
    }

    /// The option list of `--help`, made from the declarations: the command's own options, then
    /// its settings with their environment variables, then `--config` and `--help`.
    static var optionsHelp: String {
        var lines: [String] = []
        func add(_ synopsis: String, _ help: String, _ detail: String? = nil) {
            let padded = "  " + synopsis.padding(toLength: max(34, synopsis.count + 1), withPad: " ", startingAt: 0)
            lines.append(padded + (detail ?? help))
            if detail != nil { lines.append("      \(help)") }
        }
        if !options.isEmpty {
            lines.append("Options:")
            for option in options { add(option.synopsis, option.help) }
            lines.append("")
        }
        lines.append("Settings (a flag beats POSTERN_* in the environment, which beats --config FILE):")
        let wanted = Set(settings)
        for d in Settings.descriptors where wanted.contains(d.flag) {
            add("--\(d.flag)" + (d.placeholder.map { " \($0)" } ?? ""), d.help, d.environment)
        }
        for option in OptionDeclaration.common { add(option.synopsis, option.help) }
        return lines.joined(separator: "\n")
    }

    /// `postern NAME` and the action word when the command has actions (`postern users import`).
    static func invocation(_ words: [String]) -> String {
        if words.count >= 2, actions.contains(words[1]) { return "`postern \(name) \(words[1])`" }
        return "`postern \(name)`"
    }

    /// Refuses an option this command does not take, naming the command it belongs to when there
    /// is one.
    /// - Throws: `CommandFailure` with exit code 64.
    static func checkOptions(_ arguments: ParsedArguments) throws(CommandFailure) {
        let accepted = acceptedOptions
        guard let name = arguments.given.first(where: { !accepted.contains($0) }) else { return }
        if let owner = subcommands.first(where: { $0.acceptedOptions.contains(name) }) {
            throw CommandFailure(
                code: .usage,
                message: "--\(name) is an option of `postern \(owner.name)`, not of \(invocation(arguments.words)); see postern \(self.name) --help")
        }
        throw CommandFailure(code: .usage, message: "unknown option --\(name); see postern \(self.name) --help")
    }
}

extension ParsedArguments {
    /// The options that take no value, from every command's declarations and the boolean
    /// settings' descriptors: the command line is split into words and options before the
    /// command is known.
    static var switchNames: Set<String> {
        let own = (subcommands.flatMap { $0.options } + OptionDeclaration.common).filter { $0.placeholder == nil }.map(\.name)
        return Set(own + Settings.descriptors.filter { !$0.takesValue }.map(\.flag))
    }
}
