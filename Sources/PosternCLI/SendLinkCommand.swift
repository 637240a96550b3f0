import Foundation
import PosternAssembly
import PosternCore

/// `postern send-link`: makes a link and delivers its mail, directly or through a running daemon.
struct SendLinkCommand: Subcommand {
    static let name = "send-link"
    static let abstract = "make a sign-in, reset or verification link and mail it (--action, --email)"
    static let usage = """
        Usage: postern send-link --action ACTION --email ADDR [--continue-url URL] [--locale L]
                                 [--print] [--queue-only] [--json] [settings]

        Mints a code for ADDR, queues the mail that carries it and delivers it now (unless
        --queue-only leaves it to a running daemon). ACTION: sign-in, reset-password, verify-email.
        A reset or verification needs an existing account (this is an operator's tool: unlike the
        public API it says so). --print also writes the link to standard output.

        Exit codes: 0 sent (or queued), 64 usage, 65 bad input or no such account,
        69 the mail could not be delivered now (it stays queued, or is dead: see postern outbox status).

        """

    static let options: [OptionDeclaration] = [
        .value("action", "ACTION", "sign-in, reset-password or verify-email (required)"),
        .value("email", "ADDR", "the address the link is for and the mail goes to (required)"),
        .value("continue-url", "URL", "where the app continues after the link (a host of --allowed-continue-hosts)"),
        .value("locale", "L", "the language of the mail (such as de or pt-BR)"),
        .flag("print", "also write the link to standard output"),
        .flag("queue-only", "queue the mail for a running daemon instead of delivering it now"),
        .flag("json", "print the outcome as one JSON object"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows, .delivery)

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard let action = arguments.options["action"], OperatorTools.issuableActions.contains(action) else {
            throw CommandFailure(code: .usage, message: "--action must be one of \(OperatorTools.issuableActions.joined(separator: ", "))")
        }
        guard arguments.options["email"] != nil else { throw CommandFailure(code: .usage, message: "--email is required") }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        // Both were checked by validate().
        let action = arguments.options["action"] ?? ""
        let email = arguments.options["email"] ?? ""
        let settings = try arguments.settings()
        let runtime = try startup { () throws(StartupError) in
            try PosternRuntime(settings: settings, logger: standardErrorLogger("send-link"))
        }
        let issued = try flow { () throws(AuthError) in
            try runtime.service.operators.issueLink(
                action: action, email: email, continueURL: arguments.options["continue-url"], locale: arguments.options["locale"],
                queue: true)
        }
        var state = OutboxState.queued
        var reply: String?
        if !arguments.switches.contains("queue-only"), let id = issued.messageID {
            runtime.workers.start()
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let message = try? runtime.store.read({ try $0.outboxMessage(id: id) }) {
                    state = message.state
                    reply = message.lastReply
                    if message.state.isFinished || message.state == .retrying { break }
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            runtime.workers.stop(timeout: 30)
        }
        if arguments.switches.contains("json") {
            var object: [String: Any] = [
                "action": action, "expiresAt": isoDate(issued.expiresAt), "messageId": issued.messageID ?? 0, "state": state.rawValue,
            ]
            if arguments.switches.contains("print") { object["link"] = issued.link }
            if let reply { object["reply"] = reply }
            printJSON(object)
        } else {
            if arguments.switches.contains("print") { print(issued.link) }
            let recipient = (try? EmailAddress.parse(email).address) ?? email
            switch state {
            case .sent: printError("Sent the \(action) mail to \(recipient) (expires \(isoDate(issued.expiresAt))).")
            case .queued, .claimed: printError("Queued the \(action) mail to \(recipient); a running daemon will deliver it.")
            case .retrying: printError("Could not deliver to \(recipient) yet (\(reply ?? "no reply")); it stays queued and will be retried.")
            case .dead: printError("Delivery to \(recipient) failed for good: \(reply ?? "no reply").")
            }
        }
        switch state {
        case .sent, .queued, .claimed: return ExitCode.success.rawValue
        case .retrying, .dead: return arguments.switches.contains("queue-only") ? ExitCode.success.rawValue : ExitCode.unavailable.rawValue
        }
    }
}
