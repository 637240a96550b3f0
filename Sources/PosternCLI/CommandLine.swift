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

/// The parsed command line: words, then `--flag value` / `--flag=value` / boolean `--flag`.
struct ParsedArguments {
    var words: [String] = []
    var options: [String: String] = [:]
    var switches: Set<String> = []

    /// Options that take no value.
    static let booleans: Set<String> = ["help", "json", "print", "queue-only", "inspect", "new-password-stdin", "all-dead", "dry-run", "strict", "now", "markdown"]

    init(_ arguments: [String]) throws(CommandFailure) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                if argument == "-h" { switches.insert("help") } else { words.append(argument) }
                continue
            }
            var name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                options[String(name[..<equals])] = String(name[name.index(after: equals)...])
                continue
            }
            if Settings.booleanFlags.contains(name) {
                options[name] = "true"
                continue
            }
            if Self.booleans.contains(name) {
                switches.insert(name)
                continue
            }
            guard index < arguments.count else {
                throw CommandFailure(code: .usage, message: "--\(name) needs a value")
            }
            name = name.lowercased()
            options[name] = arguments[index]
            index += 1
        }
    }

    /// Resolves settings: flags, then `POSTERN_*` environment, then the `--config` JSON file.
    func settings() throws(CommandFailure) -> Settings {
        let known = Set(Settings.descriptors.map(\.flag)).union(["config"])
        if let unknown = options.keys.first(where: { !known.contains($0) && !Self.commandOptions.contains($0) }) {
            throw CommandFailure(code: .usage, message: "unknown option --\(unknown); see --help")
        }
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

    /// Options that belong to commands rather than settings.
    static let commandOptions: Set<String> = ["purpose", "action", "page", "email", "continue-url", "locale", "format", "uid", "older-than", "from", "hash-key", "hash-key-file", "salt-separator", "rounds", "mem-cost", "batch-size", "output", "events", "wait", "claim"]
}

/// Writes to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// The settings part of every command's `--help`.
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
