import Foundation
import PosternAssembly
import PosternCore

/// Exit codes of every command (API.md).
enum ExitCode: Int32 {
    case success = 0
    case usage = 64
    case badInput = 65
    case unavailable = 69
    case internalError = 70
    /// A configuration that cannot work (sysexits' EX_CONFIG): `postern check-config` found a problem.
    case config = 78
}

/// A failure that ends a command with a message and an exit code.
struct CommandFailure: Error {
    let code: ExitCode
    let message: String
}

/// The parsed command line: words, then `--flag value` / `--flag=value` / `--switch`. Which
/// options take no value comes from the declarations (``ParsedArguments/switchNames``); which
/// options a command takes is checked against its own (``Subcommand/checkOptions(_:)``).
struct ParsedArguments {
    var words: [String] = []
    var options: [String: String] = [:]
    /// Every value of each option, in order, for an option given more than once
    /// (`--redirect-uri A --redirect-uri B`); `options` keeps the last.
    var optionValues: [String: [String]] = [:]
    var switches: Set<String> = []
    /// Every option name given, in order (for the check against the command's declarations).
    var given: [String] = []
    /// The last option, when it wanted a value and none followed: reported once the command has
    /// said whether it takes that option at all.
    var missingValue: String?

    init(_ arguments: [String]) {
        let switchNames = Self.switchNames
        let booleanSettings = Set(Settings.descriptors.filter { !$0.takesValue }.map(\.flag))
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                if argument == "-h" {
                    switches.insert("help")
                    given.append("help")
                } else {
                    words.append(argument)
                }
                continue
            }
            var name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                let key = String(name[..<equals])
                options[key] = String(name[name.index(after: equals)...])
                optionValues[key, default: []].append(String(name[name.index(after: equals)...]))
                given.append(key)
                continue
            }
            if booleanSettings.contains(name) {
                options[name] = "true"
                given.append(name)
                continue
            }
            if switchNames.contains(name) {
                switches.insert(name)
                given.append(name)
                continue
            }
            name = name.lowercased()
            guard index < arguments.count else {
                missingValue = name
                given.append(name)
                break
            }
            options[name] = arguments[index]
            optionValues[name, default: []].append(arguments[index])
            given.append(name)
            index += 1
        }
    }

    /// Resolves settings: flags, then `POSTERN_*` environment, then the `--config` JSON file.
    func settings() throws(CommandFailure) -> Settings {
        let file = configFile()
        if let problem = file.problems.first { throw CommandFailure(code: .usage, message: problem) }
        do {
            return try Settings.resolve(flags: options, environment: ProcessInfo.processInfo.environment, file: file.values)
        } catch {
            throw CommandFailure(code: .usage, message: error.message)
        }
    }

    /// The `--config` (or `POSTERN_CONFIG`) file's settings, keys being the flag names, and every
    /// problem of the file: unreadable, not a JSON object, each unknown key. A key starting with
    /// `//` is a comment (JSON has none): the packaged file shows the settings to choose that way.
    func configFile() -> (values: [String: String], problems: [String]) {
        guard let path = options["config"] ?? ProcessInfo.processInfo.environment["POSTERN_CONFIG"] else { return ([:], []) }
        guard let data = FileManager.default.contents(atPath: path) else { return ([:], ["cannot read the config file \(path)"]) }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return ([:], ["the config file \(path) is not a JSON object"])
        }
        var values: [String: String] = [:]
        var problems: [String] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("//") {
            guard Settings.descriptors.contains(where: { $0.flag == key }) else {
                problems.append("the config file \(path) has an unknown key \"\(key)\"")
                continue
            }
            values[key] = (value as? String) ?? (value as? NSNumber)?.stringValue ?? "\(value)"
        }
        return (values, problems)
    }
}

/// Writes to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// The settings part of `postern --help`: every setting.
func settingsHelp() -> String {
    var lines = ["Settings (a flag beats POSTERN_* in the environment, which beats --config FILE (JSON, keys are the flag names)):"]
    for d in Settings.descriptors {
        lines.append("  --\(d.flag.padding(toLength: 24, withPad: " ", startingAt: 0)) \(d.environment)")
        lines.append("      \(d.help)")
    }
    lines.append("  --config FILE             POSTERN_CONFIG")
    return lines.joined(separator: "\n")
}

/// Runs a start-up step, turning `StartupError` and `CommandFailure` into a command failure with
/// the right exit code.
func startup<T>(_ body: () throws(StartupError) -> T) throws(CommandFailure) -> T {
    do {
        return try body()
    } catch {
        throw CommandFailure(code: error.exitCode == 64 ? .usage : .unavailable, message: error.description)
    }
}

/// The JSON-lines logger on standard error. One-shot commands log warnings and errors only; their
/// own output is for people.
func standardErrorLogger(_ label: String, level: Logger.Level = .warning) -> Logger {
    Logger(label: label, level: level) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
}
