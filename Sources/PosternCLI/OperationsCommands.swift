import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern outbox status|retry|purge`.
struct OutboxCommand: Subcommand {
    static let name = "outbox"
    static let abstract = "mail delivery: status, retry dead messages, purge old ones"
    static let usage = """
        Usage: postern outbox status [--json]
               postern outbox show ID [--json]
               postern outbox find --email ADDR [--json]
               postern outbox retry ID | --all-dead
               postern outbox purge [--older-than DAYS]   (default 7)

        status  counts by state and the latest messages (metadata only: never bodies or links).
        show    one message and its delivery log: every attempt with its time, transport, the
                server's reply code and text (addresses, links and tokens replaced) and duration.
        find    the messages whose delivery log names ADDR, newest first. The log holds only a
                keyed hash of the normalized address (HMAC under a key derived from the master
                key), so this needs the master key file, and a copy of the database alone tells
                nothing. It reads the log from the newest message back, with no index on the
                hash (one would cost every delivery a write): about 0.4 s per million attempts
                kept (--retention-days bounds them).
        retry   queues a dead message again; a running daemon picks it up within a second.
        purge   deletes sent and dead messages finished more than DAYS ago.

        """

    static let options: [OptionDeclaration] = [
        .flag("json", "status, show, find: print JSON"),
        .value("email", "ADDR", "find: the recipient whose messages to list"),
        .flag("all-dead", "retry: every dead message"),
        .value("older-than", "DAYS", "purge: messages finished more than DAYS ago (default 7)"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["status", "show", "find", "retry", "purge"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count >= 2, ["status", "show", "find", "retry", "purge"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "outbox needs status, show, find, retry or purge; see postern outbox --help")
        }
        if arguments.words[1] == "show" {
            guard arguments.words.count == 3, Int64(arguments.words[2]) != nil else {
                throw CommandFailure(code: .usage, message: "outbox show needs one message ID (a number)")
            }
        }
        if arguments.words[1] == "find" {
            guard arguments.words.count == 2, let email = arguments.options["email"], !email.isEmpty else {
                throw CommandFailure(code: .usage, message: "outbox find needs --email ADDR")
            }
        }
        if arguments.words[1] == "purge" {
            // At most 100 years: days × 86,400 must not overflow.
            guard let days = Int64(arguments.options["older-than"] ?? "7"), days >= 0, days <= 36_500 else {
                throw CommandFailure(code: .usage, message: "--older-than takes a number of days from 0 to 36500")
            }
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        // No templates, no transport: the outbox commands only read and change the queue.
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let service = flows.service
        switch arguments.words[1] {
        case "status":
            let counts = try flow { () throws(AuthError) in try service.operators.outboxCounts() }
            let latest = try flow { () throws(AuthError) in try service.operators.outboxMessages(state: nil, limit: 20) }
            if arguments.switches.contains("json") {
                printBody(OutboxStatusBody(
                    counts: Dictionary(uniqueKeysWithValues: OutboxState.allCases.map { ($0.rawValue, counts[$0]) }),
                    latest: latest.map(OutboxMessageBody.init)))
            } else {
                print(counts.description)
                for m in latest {
                    print("\(m.id)\t\(m.state.rawValue)\t\(m.intent.name)\t\(m.recipient.address)\tattempts=\(m.attempts)\t\(m.lastReply ?? "")")
                }
            }
        case "show":
            let id = Int64(arguments.words[2]) ?? 0
            guard let found = try flow({ () throws(AuthError) in try service.operators.outboxMessage(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no message \(id)")
            }
            if arguments.switches.contains("json") {
                printBody(OutboxMessageDetailBody(id: id, message: found.message, attempts: found.attempts))
            } else {
                if let m = found.message {
                    print("message:   \(m.id) \(m.intent.name) to \(m.recipient.address)")
                    print("state:     \(m.state.rawValue), attempts=\(m.attempts), created \(isoDate(m.createdAt))\(m.finishedAt.map { ", finished \(isoDate($0))" } ?? "")")
                } else {
                    print("message:   \(id) (purged; its log remains)")
                }
                print("attempts:  \(found.attempts.count)")
                for a in found.attempts {
                    print("  \(isoDate(a.attemptedAt))\t\(a.outcome.rawValue)\t\(a.transport)\t\(a.replyCode.map(String.init) ?? "-")\t\(a.durationMilliseconds) ms\t\(a.reply)")
                }
            }
        case "find":
            let email = arguments.options["email"] ?? ""
            let found = try flow { () throws(AuthError) in try service.operators.outboxMessages(email: email) }
            if arguments.switches.contains("json") {
                printBody(OutboxListBody(messages: found.compactMap { $0.message.map(OutboxMessageBody.init) }))
            } else {
                for (id, m) in found {
                    if let m {
                        print("\(m.id)\t\(m.state.rawValue)\t\(m.intent.name)\tattempts=\(m.attempts)\t\(isoDate(m.createdAt))\t\(m.lastReply ?? "")")
                    } else {
                        print("\(id)\tpurged")
                    }
                }
                if found.isEmpty { print("no message to that address in the delivery log") }
            }
        case "retry":
            var ids: [Int64] = []
            if arguments.words.count == 3, let id = Int64(arguments.words[2]) {
                ids = [id]
            } else if arguments.options["all-dead"] != nil || arguments.words.last == "--all-dead" || arguments.switches.contains("all-dead") {
                ids = try flow { () throws(AuthError) in try service.operators.outboxMessages(state: .dead, limit: 100_000) }.map(\.id)
            } else {
                throw CommandFailure(code: .usage, message: "outbox retry needs a message ID or --all-dead")
            }
            var retried = 0
            for id in ids where try flow({ () throws(AuthError) in try service.operators.retryOutboxMessage(id: id) }) { retried += 1 }
            print("queued \(retried) message(s) again")
            if retried == 0 && ids.count == 1 { return ExitCode.badInput.rawValue }
        default:
            // Checked by validate(): 0 to 36,500 days, so days × 86,400 cannot overflow.
            let days = Int64(arguments.options["older-than"] ?? "7") ?? 7
            let purged = try flow { () throws(AuthError) in try service.operators.purgeOutbox(olderThan: days * 86_400) }
            print("purged \(purged) message(s)")
        }
        return ExitCode.success.rawValue
    }
}

/// `postern users show|list|disable|enable|delete|import|export`.
struct UsersCommand: Subcommand {
    static let name = "users"
    static let abstract = "show, list, disable, enable, delete, import or export users; their sessions and activity"
    static let usage = """
        Usage: postern users show    --email ADDR | --uid UID [--json]
               postern users disable --email ADDR | --uid UID   (signs the user out everywhere)
               postern users enable  --email ADDR | --uid UID
               postern users delete  --email ADDR | --uid UID
        \(UsersList.usage)\(UsersSessions.usage)\(UsersTransfer.usage)
        """

    static let options: [OptionDeclaration] = [
        .value("email", "ADDR", "show, disable, enable, delete: the user by address"),
        .value("uid", "UID", "show, disable, enable, delete: the user by uid"),
        .flag("json", "show, list, sessions, activity, import: print JSON"),
        .value("query", "Q", "list: the user with this uid and those whose address starts with it"),
        .value("limit", "N", "list, activity: print at most N"),
        .value("revoke", "ID", "sessions: end the user's session ID"),
        .value("from", "SOURCE", "import: the export's format: firebase, supabase or postern"),
        .flag("dry-run", "import: check and count every row, import none"),
        .flag("strict", "import: import nothing when any row is malformed"),
        .value("batch-size", "N", "import: rows per transaction, 1 to 100000 (default 500)"),
        .value("hash-key", "B64", "import --from firebase: the project's signer key"),
        .value("hash-key-file", "PATH", "import --from firebase: read the signer key from this file"),
        .value("salt-separator", "B64", "import --from firebase: the salt separator"),
        .value("rounds", "N", "import --from firebase: the hash's rounds"),
        .value("mem-cost", "N", "import --from firebase: the hash's memory cost"),
        .value("output", "FILE", "export: write here (0600) instead of standard output"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["show", "list", "sessions", "activity", "disable", "enable", "delete", "import", "export"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        if arguments.words.count >= 2, ["import", "export"].contains(arguments.words[1]) {
            return try UsersTransfer(arguments: arguments).validate()
        }
        if arguments.words.count >= 2, arguments.words[1] == "list" { return try UsersList(arguments: arguments).validate() }
        if arguments.words.count >= 2, ["sessions", "activity"].contains(arguments.words[1]) {
            return try UsersSessions(arguments: arguments).validate()
        }
        guard arguments.words.count == 2, ["show", "disable", "enable", "delete"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "users needs show, list, sessions, activity, disable, enable, delete, import or export; see postern users --help")
        }
        guard arguments.options["email"] != nil || arguments.options["uid"] != nil else {
            throw CommandFailure(code: .usage, message: "give --email ADDR or --uid UID")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        if ["import", "export"].contains(arguments.words[1]) { return try UsersTransfer(arguments: arguments).run() }
        if arguments.words[1] == "list" { return try UsersList(arguments: arguments).run() }
        if ["sessions", "activity"].contains(arguments.words[1]) { return try UsersSessions(arguments: arguments).run() }
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let service = flows.service
        let found: UserRecord?
        if let email = arguments.options["email"] {
            found = try flow { () throws(AuthError) in try service.operators.user(email: email) }
        } else if let uid = arguments.options["uid"] {
            found = try flow { () throws(AuthError) in try service.operators.user(uid: uid) }
        } else {
            throw CommandFailure(code: .usage, message: "give --email ADDR or --uid UID")
        }
        guard let user = found else { throw CommandFailure(code: .badInput, message: "no such user") }
        var result = user
        switch arguments.words[1] {
        case "disable", "enable":
            let disable = arguments.words[1] == "disable"
            result = try flow { () throws(AuthError) in try service.operators.updateUser(uid: user.uid, disabled: disable, emailVerified: nil, displayName: nil) }
        case "delete":
            try flow { () throws(AuthError) in try service.operators.deleteUser(uid: user.uid) }
            print("deleted \(user.uid)")
            return ExitCode.success.rawValue
        default:
            break
        }
        if arguments.switches.contains("json") {
            // The API's user record, as GET /v1/admin/users answers it (attributes included).
            printBody(UserBody(result))
        } else {
            print("uid:            \(result.uid)")
            print("email:          \(result.email ?? "-")\(result.emailVerified ? " (verified)" : "")")
            print("display name:   \(result.displayName ?? "-")")
            print("providers:      \(result.providers.joined(separator: ", "))")
            print("created:        \(isoDate(result.createdAt))")
            print("last sign-in:   \(result.lastSignInAt.map(isoDate) ?? "-")")
            print("disabled:       \(result.disabled)")
        }
        return ExitCode.success.rawValue
    }
}
