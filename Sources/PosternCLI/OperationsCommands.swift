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
               postern outbox retry ID | --all-dead
               postern outbox purge [--older-than DAYS]   (default 7)

        status  counts by state and the latest messages (metadata only: never bodies or links).
        retry   queues a dead message again; a running daemon picks it up within a second.
        purge   deletes sent and dead messages finished more than DAYS ago.

        """

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count >= 2, ["status", "retry", "purge"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "outbox needs status, retry or purge; see postern outbox --help")
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
            let counts = try flow { () throws(AuthError) in try service.outboxCounts() }
            let latest = try flow { () throws(AuthError) in try service.outboxMessages(state: nil, limit: 20) }
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
        case "retry":
            var ids: [Int64] = []
            if arguments.words.count == 3, let id = Int64(arguments.words[2]) {
                ids = [id]
            } else if arguments.options["all-dead"] != nil || arguments.words.last == "--all-dead" || arguments.switches.contains("all-dead") {
                ids = try flow { () throws(AuthError) in try service.outboxMessages(state: .dead, limit: 100_000) }.map(\.id)
            } else {
                throw CommandFailure(code: .usage, message: "outbox retry needs a message ID or --all-dead")
            }
            var retried = 0
            for id in ids where try flow({ () throws(AuthError) in try service.retryOutboxMessage(id: id) }) { retried += 1 }
            print("queued \(retried) message(s) again")
            if retried == 0 && ids.count == 1 { return ExitCode.badInput.rawValue }
        default:
            // Checked by validate(): 0 to 36,500 days, so days × 86,400 cannot overflow.
            let days = Int64(arguments.options["older-than"] ?? "7") ?? 7
            let purged = try flow { () throws(AuthError) in try service.purgeOutbox(olderThan: days * 86_400) }
            print("purged \(purged) message(s)")
        }
        return ExitCode.success.rawValue
    }
}

/// `postern users show|disable|enable|delete|import|export`.
struct UsersCommand: Subcommand {
    static let name = "users"
    static let abstract = "show, disable, enable, delete, import or export users"
    static let usage = """
        Usage: postern users show    --email ADDR | --uid UID [--json]
               postern users disable --email ADDR | --uid UID   (signs the user out everywhere)
               postern users enable  --email ADDR | --uid UID
               postern users delete  --email ADDR | --uid UID
        \(UsersTransfer.usage)
        """

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        if arguments.words.count >= 2, ["import", "export"].contains(arguments.words[1]) {
            return try UsersTransfer(arguments: arguments).validate()
        }
        guard arguments.words.count == 2, ["show", "disable", "enable", "delete"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "users needs show, disable, enable, delete, import or export; see postern users --help")
        }
        guard arguments.options["email"] != nil || arguments.options["uid"] != nil else {
            throw CommandFailure(code: .usage, message: "give --email ADDR or --uid UID")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        if ["import", "export"].contains(arguments.words[1]) { return try UsersTransfer(arguments: arguments).run() }
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let service = flows.service
        let found: UserRecord?
        if let email = arguments.options["email"] {
            found = try flow { () throws(AuthError) in try service.user(email: email) }
        } else if let uid = arguments.options["uid"] {
            found = try flow { () throws(AuthError) in try service.user(uid: uid) }
        } else {
            throw CommandFailure(code: .usage, message: "give --email ADDR or --uid UID")
        }
        guard let user = found else { throw CommandFailure(code: .badInput, message: "no such user") }
        var result = user
        switch arguments.words[1] {
        case "disable", "enable":
            let disable = arguments.words[1] == "disable"
            result = try flow { () throws(AuthError) in try service.updateUser(uid: user.uid, disabled: disable, emailVerified: nil, displayName: nil) }
        case "delete":
            try flow { () throws(AuthError) in try service.deleteUser(uid: user.uid) }
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
