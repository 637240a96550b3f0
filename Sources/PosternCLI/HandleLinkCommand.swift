import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern handle-link`: finds the action link in pasted text and completes it.
struct HandleLinkCommand: Subcommand {
    static let name = "handle-link"
    static let abstract = "complete the action link found in pasted text (argument or stdin)"
    static let usage = """
        Usage: postern handle-link [TEXT] [--inspect] [--email ADDR] [--new-password-stdin] [--json] [settings]

        Finds the action link in TEXT (or standard input when TEXT is absent): a bare URL, a whole
        email, a link rewritten by a mail security gateway (Safe Links, Proofpoint, Google, Barracuda),
        quoted-printable debris, a bare code, or the 6-digit code (which needs --email). Then:
          sign-in          completes the sign-in and prints the session
          reset-password   asks for the new password (without echo on a terminal; or the first line
                           of standard input with --new-password-stdin, TEXT then being required)
          verify / change / recover   applies the link
        --inspect only says what the link is and whether it still works, consuming nothing.
        --email gives the address the link was sent to (needed for a 6-digit code).

        When the link cannot be used, the message says why, in a sentence and its API code:
          expired (EXPIRED_OOB_CODE), already used (LINK_USED), superseded by a newer link for the
          same address that was used (LINK_SUPERSEDED), bound to the browser that asked for it
          (LINK_OTHER_BROWSER: open it there, or give the 6-digit code with --email), or invalid
          (INVALID_OOB_CODE: tampered, unknown, for another action, or the account changed).

        Exit codes: 0 done, 64 usage, 65 the text holds no usable link or the link cannot be used
        (the message says which of the reasons above), 69 the database is unavailable.

        """

    static let options: [OptionDeclaration] = [
        .flag("inspect", "only say what the link is and whether it still works; consume nothing"),
        .value("email", "ADDR", "the address the link was sent to (needed for a 6-digit code)"),
        .flag("new-password-stdin", "for a reset link, read the new password from the first line of standard input"),
        .flag("json", "print the outcome as one JSON object"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows, .delivery)

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count <= 2 else {
            throw CommandFailure(code: .usage, message: "give the text as one argument (quote it) or on standard input")
        }
        if arguments.switches.contains("new-password-stdin") && arguments.words.count < 2 {
            throw CommandFailure(code: .usage, message: "--new-password-stdin reads the password from standard input, so give the link as TEXT")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let passwordFromStdin = arguments.switches.contains("new-password-stdin")
        let text = arguments.words.count == 2 ? arguments.words[1] : readStandardInput(limit: PastedLinkParser.maximumInputBytes)
        let settings = try arguments.settings()
        let runtime = try startup { () throws(StartupError) in
            try PosternRuntime(settings: settings, logger: standardErrorLogger("handle-link"))
        }
        let service = runtime.service
        let json = arguments.switches.contains("json")
        let email = arguments.options["email"]

        let pasted = try flow { () throws(AuthError) in try service.ledger.readPasted(text) }
        let oobCode: String
        switch pasted {
        case .sixDigitCode(let digits):
            guard let email else { throw CommandFailure(code: .usage, message: "a 6-digit code needs --email ADDR") }
            if arguments.switches.contains("inspect") {
                Self.report(json, ["mode": "signIn", "kind": "sixDigitCode"], "A 6-digit sign-in code (checked when used).")
                return ExitCode.success.rawValue
            }
            let login = try flow { () throws(AuthError) in
                try service.emailLink.complete(EmailLinkCompletion(code: digits, email: email))
            }
            Self.printLogin(login, json: json)
            return ExitCode.success.rawValue
        case .link(let link): oobCode = link.oobCode
        case .oobCode(let code): oobCode = code
        }

        let info = try flow { () throws(AuthError) in try service.addresses.inspect(link: nil, oobCode: oobCode) }
        if arguments.switches.contains("inspect") {
            var object: [String: Any] = [
                "mode": info.mode.rawValue, "email": info.email ?? NSNull(), "expiresAt": isoDate(info.expiresAt), "valid": true,
            ]
            object["continueUrl"] = info.continueURL ?? NSNull()
            let whose = info.email.map { " for \($0)" } ?? " (sent with a PKCE challenge: it completes only with its verifier)"
            Self.report(json, object, "A \(info.mode.rawValue) link\(whose), valid until \(isoDate(info.expiresAt))."
                   + (info.continueURL.map { " It continues to \($0)." } ?? ""))
            return ExitCode.success.rawValue
        }
        switch info.mode {
        case .signIn:
            let login = try flow { () throws(AuthError) in
                try service.emailLink.complete(EmailLinkCompletion(oobCode: oobCode, email: email))
            }
            Self.printLogin(login, json: json)
        case .resetPassword:
            let password = try Self.newPassword(fromStdin: passwordFromStdin)
            let applied = try flow { () throws(AuthError) in
                try service.addresses.apply(link: nil, oobCode: oobCode, newPassword: password)
            }
            Self.report(json, ["mode": applied.mode.rawValue, "email": applied.email],
                   "The password of \(applied.email) was changed; every session was signed out.")
        case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
            let applied = try flow { () throws(AuthError) in try service.addresses.apply(link: nil, oobCode: oobCode, newPassword: nil) }
            let sentence = switch applied.mode {
            case .verifyEmail: "\(applied.email) is verified."
            case .verifyAndChangeEmail: "The account now uses \(applied.email)."
            default: "The account's address is back to \(applied.email); every session was signed out."
            }
            Self.report(json, ["mode": applied.mode.rawValue, "email": applied.email], sentence)
        }
        // Notices the action queued (password changed, recovery link) go out now.
        runtime.deliverQueued(timeout: 10)
        return ExitCode.success.rawValue
    }

    private static func report(_ json: Bool, _ object: [String: Any], _ sentence: String) {
        if json { printJSON(object) } else { print(sentence) }
    }

    private static func printLogin(_ login: LoginDescriptor, json: Bool) {
        if json {
            // The API's LoginDescriptor, byte for byte the shape /v1/email-link/complete answers.
            printBody(LoginBody(login))
        } else {
            print("Signed in as \(login.email ?? "?") (uid \(login.uid))\(login.isNewUser ? ", a new account" : "").")
            print("idToken: \(login.session.idToken)")
            print("refreshToken: \(login.session.refreshToken)")
        }
    }

    /// The new password: the first line of standard input, or typed twice without echo on a terminal.
    private static func newPassword(fromStdin: Bool) throws(CommandFailure) -> String {
        if fromStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw CommandFailure(code: .usage, message: "no password on standard input")
            }
            return line
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure(code: .usage, message: "standard input is not a terminal: use --new-password-stdin")
        }
        let first = Self.readSecret(prompt: "New password: ")
        let second = Self.readSecret(prompt: "Again: ")
        guard first == second else { throw CommandFailure(code: .badInput, message: "the two passwords differ") }
        return first
    }

    /// Reads a line from the terminal with echo off.
    private static func readSecret(prompt: String) -> String {
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true) ?? ""
    }
}
