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
        let environment = ProcessInfo.processInfo.environment
        var file: [String: String] = [:]
        if let path = options["config"] ?? environment["POSTERN_CONFIG"] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(code: .usage, message: "cannot read the config file \(path)")
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw CommandFailure(code: .usage, message: "the config file \(path) is not a JSON object")
            }
            for (key, value) in object {
                guard Settings.descriptors.contains(where: { $0.flag == key }) else {
                    throw CommandFailure(code: .usage, message: "the config file \(path) has an unknown key \"\(key)\"")
                }
                file[key] = (value as? String) ?? (value as? NSNumber)?.stringValue ?? "\(value)"
            }
        }
        do {
            return try Settings.resolve(flags: options, environment: environment, file: file)
        } catch {
            throw CommandFailure(code: .usage, message: error.message)
        }
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
