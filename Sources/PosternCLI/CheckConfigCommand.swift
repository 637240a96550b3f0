import Foundation
import PosternAssembly
import PosternCore

/// `postern check-config`: reads the settings as `serve` does and lists every problem at once,
/// then exits 0 or 78 (EX_CONFIG).
struct CheckConfigCommand: Subcommand {
    static let name = "check-config"
    static let abstract = "check the settings as serve reads them: every problem at once, the database, the master key, the SMTP relay"
    static let usage = """
        Usage: postern check-config [--no-relay] [settings]

        Reads the settings as postern serve does (flags, POSTERN_* and --config FILE) and lists
        every problem at once: each setting that cannot be read, the templates, the secret and CA
        files, the database (opened, and migrated, as serve would at start) and the master key
        tried against its signing keys. With an smtp:// or smtps:// --smtp-url it logs in to the
        relay — EHLO, STARTTLS, AUTH, QUIT — and sends nothing. A database or master key file that
        does not exist yet is a note: the first start of serve makes them.

        Run it as the daemon's user, so that nothing it opens changes owner:
          sudo -u postern postern check-config --config /etc/postern/postern.json

        Exit codes: 0 when serve would start and deliver, 78 (EX_CONFIG) when something must be
        fixed first.

        """

    static let options: [OptionDeclaration] = [
        .flag("no-relay", "do not log in to the SMTP relay (it is down for now, or not set up yet)"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows, .delivery, .daemon)

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    func validate() throws(CommandFailure) {
        guard arguments.words.count == 1 else { throw CommandFailure(code: .usage, message: "check-config takes no argument") }
    }

    func run() throws -> Int32 {
        let (settings, settingProblems) = resolve()
        // Until the settings resolve, the rest would be checked against defaults: it waits.
        let check = settings.map { ConfigurationCheck(settings: $0, relay: !arguments.switches.contains("no-relay")) }
        let problems = settingProblems + (check?.problems ?? [])
        for note in check?.notes ?? [] { print("ok: \(note)") }
        for problem in problems { print("problem: \(problem)") }
        if problems.isEmpty {
            print("postern check-config: no problem found")
            return ExitCode.success.rawValue
        }
        print("postern check-config: \(problems.count) problem\(problems.count == 1 ? "" : "s") to fix")
        return ExitCode.config.rawValue
    }

    /// The settings, and every problem reading them: the config file's, then each setting that
    /// cannot be read (one resolution stops at the first, so a failing setting is set aside and
    /// the rest resolved again), then a problem between settings. Nil settings when any remain.
    func resolve() -> (Settings?, [String]) {
        let environment = ProcessInfo.processInfo.environment
        let file = arguments.configFile()
        var problems = file.problems
        var flags = arguments.options
        var variables = environment
        var values = file.values
        for _ in 0...Settings.descriptors.count {
            do {
                let settings = try Settings.resolve(flags: flags, environment: variables, file: values)
                return (problems.isEmpty ? settings : nil, problems)
            } catch {
                problems.append(error.message)
                // The origin the message starts with names the setting to set aside.
                guard let failed = Settings.descriptors.first(where: { d in
                    ["--\(d.flag)", d.environment, "\"\(d.flag)\" in the config file"].contains { error.message.hasPrefix($0 + ": ") }
                }) else { return (nil, problems) }
                flags[failed.flag] = nil
                variables[failed.environment] = nil
                values[failed.flag] = nil
            }
        }
        return (nil, problems)
    }
}
