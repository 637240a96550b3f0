@testable import PosternCLI
import PosternCore
import Testing

/// Each command takes its own options and the settings it reads, declared once: the parsing,
/// the check and the `--help` list are made from the declarations, so another command's option
/// is a usage error naming the command it belongs to, and the help cannot drift.
@Suite("Command options")
struct CommandOptionsTests {
    func failure(_ arguments: [String]) -> CommandFailure? {
        do {
            _ = try Invocation.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    /// The option names a help text lists: the lines that start with `  --NAME`.
    func listedOptions(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            return String(line.dropFirst(4).prefix { $0 != " " && $0 != "," })
        }
    }

    @Test("a command's --help lists exactly its declared options and settings, each once")
    func helpListsTheDeclarations() throws {
        for command in subcommands {
            guard case .help(let text) = try Invocation.parse([command.name, "--help"]) else {
                Issue.record("\(command.name) --help is not help")
                continue
            }
            let listed = listedOptions(String(text.dropFirst(command.usage.count)))
            #expect(Set(listed) == command.acceptedOptions, "\(command.name)")
            #expect(listed.count == Set(listed).count, "\(command.name) lists an option twice")
            for option in command.options {
                #expect(text.contains("  \(option.synopsis) ") && text.contains(option.help), "\(command.name) \(option.name)")
            }
        }
        let users = try #require(subcommands.first { $0.name == "users" })
        #expect(!users.acceptedOptions.contains("workers") && users.acceptedOptions.contains("scrypt-log-n"))
        #expect(Set(TemplatesCommand.settings) == ["templates", "public-url", "app-name", "support-email", "mail-from"])
    }

    @Test("another command's option is a usage error naming the command it belongs to", arguments: [
        (["users", "import", "users.json", "--from", "supabase", "--workers", "8"],
         "--workers is an option of `postern serve`, not of `postern users import`"),
        (["keys", "list", "--from", "firebase"], "--from is an option of `postern users`, not of `postern keys list`"),
        (["serve", "--email", "a@example.com"], "--email is an option of `postern send-link`, not of `postern serve`"),
        (["serve", "--json"], "--json is an option of `postern send-link`, not of `postern serve`"),
        (["outbox", "status", "--listen", "127.0.0.1:1"], "--listen is an option of `postern serve`, not of `postern outbox status`"),
        (["handle-link", "https://a.example/x", "--trust-proxy"], "--trust-proxy is an option of `postern serve`, not of `postern handle-link`"),
        (["templates", "check", "--database", "x.db"], "--database is an option of `postern serve`, not of `postern templates check`"),
        (["send-link", "--action", "sign-in", "--email", "a@example.com", "--dry-run"], "--dry-run is an option of `postern users`"),
    ])
    func foreignOption(arguments: [String], says: String) {
        let refused = failure(arguments)
        #expect(refused?.code == .usage, "\(arguments)")
        #expect(refused?.message.contains(says) == true, "\(refused?.message ?? "accepted")")
        #expect(PosternCLI.main(arguments) == 64)
    }

    @Test("an unknown option is a usage error, on every command")
    func unknownOption() {
        for command in subcommands {
            let refused = failure([command.name, "--no-such-option", "1"])
            #expect(refused?.code == .usage && refused?.message.contains("unknown option --no-such-option") == true, "\(command.name)")
            let last = failure([command.name, "--no-such-switch"])
            #expect(last?.message.contains("unknown option --no-such-switch") == true, "\(command.name): \(last?.message ?? "accepted")")
            #expect(PosternCLI.main([command.name, "--no-such-switch"]) == 64, "\(command.name)")
        }
    }

    @Test("a boolean setting takes no value because its descriptor says so; no option is a switch in one command and takes a value in another")
    func switchesComeFromTheDeclarations() throws {
        guard case .run(let serve) = try Invocation.parse(["serve", "--trust-proxy", "--pg-poll-only", "--listen", "127.0.0.1:1"]),
            let command = serve as? ServeCommand
        else {
            Issue.record("serve with boolean settings does not parse")
            return
        }
        let settings = try command.arguments.settings()
        #expect(settings.trustProxy && settings.pgPollOnly && settings.listen == "127.0.0.1:1")
        #expect(ParsedArguments(["serve", "--trust-proxy=false"]).options["trust-proxy"] == "false")
        let booleans = Set(Settings.descriptors.filter { !$0.takesValue }.map(\.flag))
        #expect(booleans == ["trust-proxy", "send-no-account-mail", "pg-poll-only", "phone-sign-in", "notify-new-device"])
        let all = subcommands.flatMap { $0.options } + OptionDeclaration.common
        for option in all {
            #expect(all.allSatisfy { $0.name != option.name || ($0.placeholder == nil) == (option.placeholder == nil) }, "\(option.name)")
            #expect(!Settings.descriptors.contains { $0.flag == option.name }, "\(option.name) is also a setting")
        }
        for command in subcommands {
            for flag in command.settings {
                #expect(Settings.descriptors.contains { $0.flag == flag }, "\(command.name) declares no setting \(flag)")
            }
        }
    }

    @Test("the command lines the scripts and integration tests use stay valid", arguments: [
        ["keys", "list", "--database", "x.db", "--master-key-file", "x.key", "--json"],
        ["keys", "rotate", "--purpose", "action-code"],
        ["keys", "rotate", "--purpose", "id-token-rsa"],
        ["send-link", "--action", "sign-in", "--email", "ann@example.com", "--print", "--database", "x.db", "--public-url",
         "http://127.0.0.1:1", "--allowed-continue-hosts", "app.example.com"],
        ["handle-link", "https://127.0.0.1/x", "--inspect", "--json", "--database", "x.db", "--public-url", "http://127.0.0.1:1",
         "--allowed-continue-hosts", "app.example.com,127.0.0.1"],
        ["users", "show", "--email", "ann@example.com", "--json", "--database", "x.db"],
        ["users", "disable", "--uid", "u1", "--database", "x.db", "--allow-private-targets", "127.0.0.1/32"],
        ["users", "import", "u.json", "--from", "firebase", "--database", "x.db", "--json", "--hash-key", "c2VjcmV0",
         "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14", "--scrypt-log-n", "12", "--dry-run", "--strict"],
        ["users", "export", "--database", "x.db", "--output", "u.jsonl"],
        ["maintenance", "run", "--json", "--database", "x.db", "--retention-days", "7"],
        ["bounces", "take", "dsn.eml", "--database", "x.db", "--bounce-address", "bounce@relay.test"],
        ["outbox", "find", "--email", "a@example.com", "--json", "--database", "x.db", "--allow-private-targets", "127.0.0.1/32"],
        ["outbox", "retry", "--all-dead"],
        ["phones", "show", "--email", "u@example.com", "--database", "x.db", "--public-url", "http://127.0.0.1:1"],
        ["phones", "remove", "--claim", "c1", "--database", "x.db"],
        ["webhooks", "test", "ep_x", "--wait", "20", "--database", "x.db", "--allow-private-targets", "127.0.0.1/32"],
        ["sms", "status", "--json", "--sms-transport", "twilio:AC1", "--sms-twilio-auth-token-file", "t", "--sms-countries", "DE",
         "--database", "x.db"],
        ["sms", "test", "015112345678", "--now", "--default-region", "DE", "--sms-from", "+4915100000000"],
        ["templates", "render", "--action", "password-changed", "--format", "html", "--app-name", "A", "--support-email",
         "help@example.com"],
        ["templates", "check", "--config", "config.json", "--templates", "t"],
        ["serve", "--listen", "127.0.0.1:1", "--metrics-listen", "off", "--scrypt-log-n", "12", "--trust-proxy", "--admin-token",
         "0123456789abcdef0123", "--workers", "2"],
    ])
    func existingCommandLines(arguments: [String]) {
        let refused = failure(arguments)
        #expect(refused == nil || !(refused?.message.contains("option") ?? false), "\(arguments): \(refused?.message ?? "")")
    }
}
