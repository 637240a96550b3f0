import PosternAssembly
import PosternCore

/// `postern users invite ADDR`: queues an invitation (a link that creates the account whatever
/// `--sign-up` says) for a running daemon to deliver.
struct UsersInvite {
    static let usage = """
               postern users invite ADDR [--continue-url URL] [--locale L] [--json]

        invite  mail ADDR an invitation: its link creates the account even when --sign-up is
                invite or closed, once, within --invitation-lifetime (default 7 days). The mail
                is queued for a running daemon. An address that has an account is told here
                (exit 65) and sent nothing.

        """

    let arguments: ParsedArguments

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count == 3 else { throw CommandFailure(code: .usage, message: "users invite takes one address: postern users invite ADDR") }
        if let option = arguments.given.first(where: ["email", "uid"].contains) {
            throw CommandFailure(code: .usage, message: "--\(option) is not for users invite; give the address as its argument")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let invitation = try flow { () throws(AuthError) in
            try flows.service.operators.invite(
                email: arguments.words[2], continueURL: arguments.options["continue-url"], locale: arguments.options["locale"])
        }
        if arguments.switches.contains("json") {
            printJSON(["email": invitation.email, "expiresAt": isoDate(invitation.expiresAt), "messageId": invitation.messageID, "state": "queued"])
        } else {
            print("Queued the invitation to \(invitation.email) (message \(invitation.messageID), its link expires \(isoDate(invitation.expiresAt))); a running daemon delivers it.")
        }
        return ExitCode.success.rawValue
    }
}
