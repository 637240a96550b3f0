import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern suppressions list|remove`: the addresses no mail is sent to, and lifting one.
struct SuppressionsCommand: Subcommand {
    static let name = "suppressions"
    static let abstract = "Suppressed addresses: list them with their reason, lift one"
    static let usage = """
        Usage: postern suppressions list [--email ADDR] [--json]
               postern suppressions remove ADDR

        list    the suppressed addresses, newest first, each with its reason, time (UTC) and detail:
                  bounce     a delivery report (RFC 3464), or a provider's bounce event, said
                             the mail failed for good
                  complaint  an abuse report (RFC 5965), or a provider's complaint event: the
                             recipient called the mail spam
                  rejected   the relay refused the mail with a permanent (5xx) reply
                --email: that address alone (nothing printed but "not suppressed" if it is not).
        remove  lifts the suppression of ADDR, whatever its reason: mail to it is sent again.
                An address that is not suppressed exits 65.

        No mail is sent to a suppressed address: its messages are marked dead when their turn
        comes. A sign-in with a code mailed to the address (the 6-digit code or its link) lifts a
        bounce or rejected suppression by itself; a complaint stays until it is removed here.
        The same as GET and DELETE /v1/admin/suppressions (docs/API.md).

        """

    static let options: [OptionDeclaration] = [
        .value("email", "ADDR", "list: that address's suppression alone"),
        .flag("json", "list: print the admin API's JSON body"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["list", "remove"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        let words = arguments.words
        guard words.count >= 2, Self.actions.contains(words[1]) else {
            throw CommandFailure(code: .usage, message: "suppressions needs list or remove; see postern suppressions --help")
        }
        if words[1] == "list" {
            guard words.count == 2 else { throw CommandFailure(code: .usage, message: "suppressions list takes no argument (--email ADDR for one)") }
        } else {
            guard words.count == 3 else { throw CommandFailure(code: .usage, message: "suppressions remove needs one ADDR") }
            if let option = arguments.given.first(where: ["email", "json"].contains) {
                throw CommandFailure(code: .usage, message: "--\(option) is for suppressions list")
            }
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let operators = flows.service.operators
        if arguments.words[1] == "remove" {
            let email = arguments.words[2]
            guard try flow({ () throws(AuthError) in try operators.removeSuppression(email: email) }) else {
                throw CommandFailure(code: .badInput, message: "\(email.debugDescription) is not suppressed")
            }
            print("lifted the suppression of \(email)")
            return ExitCode.success.rawValue
        }
        var listed: [Suppression] = []
        if let email = arguments.options["email"] {
            listed = try flow { () throws(AuthError) in try operators.suppression(email: email) }.map { [$0] } ?? []
        } else {
            var cursor: SuppressionCursor?
            repeat {
                let after = cursor
                let page = try flow { () throws(AuthError) in try operators.suppressions(after: after, limit: OperatorTools.suppressionPageLimit) }
                listed += page.suppressions
                cursor = page.next
            } while cursor != nil
        }
        print(Self.describe(listed, json: arguments.switches.contains("json"), one: arguments.options["email"] != nil))
        return ExitCode.success.rawValue
    }

    /// What `list` prints: a line per suppression (address, reason, time and the stored detail: a
    /// status, a server's reply, the provider whose event it was), or the admin API's body.
    static func describe(_ suppressions: [Suppression], json: Bool, one: Bool = false) -> String {
        if json {
            return String(decoding: APIJSON.encode(SuppressionListBody(suppressions: suppressions.map(SuppressionBody.init), nextCursor: nil)), as: UTF8.self)
        }
        if suppressions.isEmpty { return one ? "not suppressed" : "no suppressed addresses" }
        return suppressions.map { [$0.address, $0.reason.rawValue, isoDate($0.suppressedAt), $0.detail].joined(separator: "\t") }
            .joined(separator: "\n")
    }
}
