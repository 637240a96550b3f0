import PosternCore

/// `postern settings [--markdown]`: every setting from its own declaration, as the help lists
/// them or as the table of docs/configuration.md (which a test keeps equal to this output).
struct SettingsCommand: Subcommand {
    static let name = "settings"
    static let abstract = "list every setting: flag, environment variable, meaning (--markdown for docs/configuration.md)"
    static let usage = """
        Usage: postern settings [--markdown]

        Prints every setting with its flag, environment variable and meaning, made from the
        settings' own declarations. --markdown prints docs/configuration.md:
          postern settings --markdown > docs/configuration.md

        """

    static let options: [OptionDeclaration] = [
        .flag("markdown", "print docs/configuration.md's table instead of the help's list"),
    ]
    /// It reads no setting: it lists them.
    static let settings: [String] = []

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors: words after `settings` (another option is refused by its declarations).
    func validate() throws(CommandFailure) {
        guard arguments.words == ["settings"] else {
            throw CommandFailure(code: .usage, message: "settings takes no words; see postern settings --help")
        }
        if let option = arguments.options.keys.sorted().first {
            throw CommandFailure(code: .usage, message: "settings takes only --markdown, not --\(option)")
        }
    }

    func run() throws -> Int32 {
        print(arguments.switches.contains("markdown") ? settingsMarkdown() : settingsHelp())
        return ExitCode.success.rawValue
    }
}

/// docs/configuration.md: one table row per setting, in the order `--help` lists them.
func settingsMarkdown() -> String {
    var lines = [
        "# Configuration",
        "",
        "<!-- Made by `postern settings --markdown > docs/configuration.md` from the settings' declarations",
        "(Sources/PosternCore/Settings); Tests/integration/configuration-doc.sh fails when this file differs. Do not edit by hand. -->",
        "",
        "Every setting is a flag, an environment variable, and a key of the JSON file given with `--config FILE`",
        "(or `POSTERN_CONFIG`), whose keys are the flag names. A flag beats the environment, which beats the file.",
        "Switches (marked *switch*) take no value as a flag; in the environment or the file they are `true` or `false`.",
        "On its command line each command takes the settings it reads (`postern COMMAND --help` lists them); the environment and the file apply to every command.",
        "",
        "| Flag | Environment variable | Meaning |",
        "| --- | --- | --- |",
    ]
    for descriptor in Settings.descriptors {
        let kind = descriptor.takesValue ? "" : " *switch*"
        lines.append("| `--\(descriptor.flag)`\(kind) | `\(descriptor.environment)` | \(markdownCell(descriptor.help)) |")
    }
    lines.append("| `--config` | `POSTERN_CONFIG` | a JSON object of settings, keys the flag names (default: none) |")
    return lines.joined(separator: "\n")
}

/// Help text as one table cell: the characters Markdown would read as table, emphasis or HTML
/// are escaped, so the cell shows what `--help` shows.
private func markdownCell(_ text: String) -> String {
    var cell = ""
    for character in text {
        switch character {
        case "|": cell += "\\|"
        case "*": cell += "\\*"
        case "_": cell += "\\_"
        case "<": cell += "&lt;"
        case ">": cell += "&gt;"
        case "\n": cell += " "
        default: cell.append(character)
        }
    }
    return cell
}
