@testable import PosternCLI
import PosternAssembly
import Testing

/// The command line run with argument arrays: help, usage errors and settings checked before
/// anything is opened (no database is touched by any of these).
@Suite("Command line")
struct InvocationTests {
    func usageError(_ arguments: [String]) -> String? { ParsedCommand.usageError(arguments) }

    func help(_ arguments: [String]) throws -> String {
        guard case .help(let text) = try Invocation.parse(arguments) else {
            Issue.record("\(arguments) is not help")
            return ""
        }
        return text
    }

    @Test("postern --help lists every subcommand with its abstract, made from the commands themselves")
    func topHelp() throws {
        let text = try help(["--help"])
        for command in subcommands {
            #expect(text.contains(command.name) && text.contains(command.abstract), "\(command.name)")
        }
        #expect(text.contains("--ttl-sign-in"), "the settings follow")
        #expect(try help(["help"]) == text)
    }

    @Test("postern --version says the release, the commit and the schema versions a database is migrated to")
    func version() throws {
        let lines = try help(["--version"]).split(separator: "\n").map(String.init)
        let schema = PosternStorage.schemaVersions
        #expect(lines == ["postern \(BuildStamp.version)", "commit \(BuildStamp.commit)", "schema \(schema.sqlite) (SQLite), \(schema.postgres) (PostgreSQL)"])
        #expect(schema.sqlite > 20 && schema.postgres > 20)
    }

    @Test("each subcommand's --help is its usage, then its options and settings")
    func subcommandHelp() throws {
        for command in subcommands {
            let text = try help([command.name, "--help"])
            #expect(text.hasPrefix(command.usage) && text.contains("--config FILE"), "\(command.name)")
        }
    }

    @Test("usage errors name what to fix, before anything is opened", arguments: [
        (["serve", "--ttl-sign-in", "9223372036854775807"], "--ttl-sign-in"),
        (["serve", "--ttl-reset-password", "2592001"], "--ttl-reset-password"),
        (["serve", "--public-url", "/relative"], "--public-url"),
        (["serve", "--no-such-option", "x"], "--no-such-option"),
        (["users", "show"], "--email ADDR or --uid UID"),
        (["users", "rename", "--email", "a@example.com"], "users needs show"),
        (["outbox", "purge", "--older-than", "10000000000000000"], "--older-than"),
        (["outbox", "purge", "--older-than", "-1"], "--older-than"),
        (["outbox"], "outbox needs status"),
        (["outbox", "show"], "outbox show needs one message ID"),
        (["outbox", "show", "x"], "outbox show needs one message ID"),
        (["outbox", "find"], "outbox find needs --email ADDR"),
        (["webhooks"], "webhooks needs add, list"),
        (["webhooks", "enable", "ep_x"], "webhooks needs add, list"),
        (["webhooks", "add"], "webhooks add needs one URL"),
        (["webhooks", "add", "ftp://hooks.example/"], "webhooks add: each URL must be"),
        (["webhooks", "add", "https://u:pw@hooks.example/"], "no user or password"),
        (["webhooks", "add", "https://hooks.example/", "--events", "user.nothing"], "--events: unknown event type user.nothing"),
        (["webhooks", "list", "extra"], "webhooks list takes no argument"),
        (["webhooks", "remove"], "webhooks remove needs one endpoint ID"),
        (["webhooks", "test", "ep_x", "--wait", "-1"], "--wait takes"),
        (["keys", "rotate", "--purpose", "everything"], "--purpose"),
        (["send-link", "--action", "delete-account", "--email", "a@example.com"], "--action"),
        (["send-link", "--action", "sign-in"], "--email is required"),
        (["handle-link", "a", "b"], "one argument"),
        (["handle-link", "--new-password-stdin"], "give the link as TEXT"),
        (["templates", "render", "--action", "nonsense"], "--action"),
        (["templates", "render", "--action", "sign-in", "--format", "pdf"], "--format"),
        (["templates", "render", "--page", "nonsense"], "--page must be one of sign-in, reset-password, confirm, done, error"),
        (["templates", "render", "--page", "error", "--action", "sign-in"], "not both"),
        (["serve", "--apple-app-ids", "com.example.app"], "--apple-app-ids"),
        (["serve", "--android-apps", "com.example.app:AB:CD"], "--android-apps"),
        (["serve", "--app-name", ""], "--app-name"),
        (["serve", "--support-email", "nobody"], "--support-email"),
        (["frobnicate"], "unknown command"),
        (["serve", "--listen"], "needs a value"),
        (["maintenance"], "maintenance needs run"),
        (["maintenance", "vacuum"], "maintenance needs run"),
        (["maintenance", "run", "extra"], "maintenance needs run"),
        (["maintenance", "run", "--retention-days", "0"], "--retention-days"),
        (["serve", "--retention-days", "3651"], "--retention-days"),
        (["users", "import"], "users import needs one FILE"),
        (["users", "import", "a.json", "b.json", "--from", "firebase"], "users import needs one FILE"),
        (["users", "import", "users.json"], "needs --from firebase, supabase or postern"),
        (["users", "import", "users.json", "--from", "auth0"], "needs --from firebase, supabase or postern"),
        (["users", "import", "users.json", "--from", "supabase", "--batch-size", "0"], "--batch-size"),
        (["users", "import", "users.json", "--from", "supabase", "--batch-size", "100001"], "--batch-size"),
        (["users", "import", "users.json", "--from", "firebase", "--hash-key", "not base64!"], "--hash-key must be base64"),
        (["users", "import", "users.json", "--from", "firebase", "--hash-key", "c2VjcmV0"], "--rounds N and --mem-cost N"),
        (["users", "import", "users.json", "--from", "firebase", "--hash-key-file", "/nonexistent/key"], "--hash-key-file"),
        (["users", "export", "users.jsonl"], "users export takes no file"),
    ])
    func usageErrors(arguments: [String], says: String) {
        let message = usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "no error")")
    }

    @Test("a bad Firebase hash key is refused without the key in the message")
    func hashKeyNeverEchoed() {
        let key = "c2VjcmV0LXNpZ25lci1rZXk="
        for extra in [["--rounds", "99", "--mem-cost", "14"], ["--rounds", "8", "--mem-cost", "99"], ["--salt-separator", "%%"]] {
            let message = usageError(["users", "import", "users.json", "--from", "firebase", "--hash-key", key] + extra)
            #expect(message != nil, "\(extra) was accepted")
            #expect(message?.contains(key) == false && message?.contains("c2VjcmV0") == false, "\(message ?? "")")
        }
    }

    @Test("users import and export parse into the users command")
    func usersTransferParses() throws {
        for arguments in [
            ["users", "import", "users.json", "--from", "supabase", "--dry-run", "--json"],
            ["users", "import", "users.jsonl", "--from", "postern", "--strict", "--batch-size", "100"],
            ["users", "export", "--output", "users.jsonl"],
        ] {
            guard case .run(let command) = try Invocation.parse(arguments) else {
                Issue.record("\(arguments) is not a command")
                continue
            }
            #expect(type(of: command).name == "users", "\(arguments)")
        }
    }

    @Test("sms: usage errors before anything is opened, and the number is never echoed")
    func smsUsage() throws {
        #expect(usageError(["sms"])?.contains("test or status") == true)
        #expect(usageError(["sms", "test"])?.contains("one NUMBER") == true)
        let national = usageError(["sms", "test", "015112345678"])
        #expect(national?.contains("international form") == true && national?.contains("12345678") == false)
        let letters = usageError(["sms", "test", "+1-800-FLOWERS"])
        #expect(letters?.contains("letters") == true && letters?.contains("FLOWERS") == false)
        #expect(usageError(["sms", "test", "015112345678", "--default-region", "DE"]) == nil, "national input with a region")
        #expect(usageError(["sms", "test", "+4915112345678", "--now"]) == nil)
        #expect(usageError(["sms", "status", "--json"]) == nil)
        let text = try help(["sms", "--help"])
        #expect(text.contains("postern sms test NUMBER [--now]") && text.contains("--sms-transport") && text.contains("--sms-per-day"))
    }

    @Test("a valid command line parses into its command, unrun")
    func parses() throws {
        guard case .run(let command) = try Invocation.parse(["outbox", "purge", "--older-than", "30"]) else {
            Issue.record("not a command")
            return
        }
        #expect(type(of: command).name == "outbox")
        guard case .run(let serve) = try Invocation.parse(["serve", "--ttl-sign-in", "2592000"]) else { return }
        #expect(type(of: serve).name == "serve")
        guard case .run(let maintenance) = try Invocation.parse(["maintenance", "run", "--json", "--retention-days", "7"]) else {
            Issue.record("maintenance run is not a command")
            return
        }
        #expect(type(of: maintenance).name == "maintenance")
        for arguments in [
            ["webhooks", "add", "https://hooks.example/in", "--events", "user.*,mail.failed", "--json"], ["webhooks", "list"],
            ["webhooks", "rotate-secret", "ep_x"], ["webhooks", "test", "settings-1", "--wait", "0"],
        ] {
            guard case .run(let command) = try Invocation.parse(arguments) else {
                Issue.record("\(arguments) is not a command")
                continue
            }
            #expect(type(of: command).name == "webhooks", "\(arguments)")
        }
        for arguments in [["outbox", "show", "42", "--json"], ["outbox", "find", "--email", "ann@example.com"]] {
            guard case .run(let command) = try Invocation.parse(arguments) else {
                Issue.record("\(arguments) is not a command")
                continue
            }
            #expect(type(of: command).name == "outbox", "\(arguments)")
        }
    }
}
