import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern bounces take [FILE]`: takes in one delivery report (RFC 3464) or abuse report (RFC
/// 5965) — for a relay's pipe (Postfix `aliases`: `bounce: "|postern bounces take"`), procmail,
/// or a shell loop over a mailbox.
struct BouncesCommand: Subcommand {
    static let name = "bounces"
    static let abstract = "take in a delivery or abuse report sent back to a --bounce-address"
    static let usage = """
        Usage: postern bounces take [FILE] [--json]

        Reads one message, from FILE or standard input (FILE absent or -), as mail brought it back
        to a message's reverse path (set --bounce-address, so each message leaves from its own
        bounce+<id>.<key>.<tag>@… address), and records what it says on that message:
          failed (RFC 3464, 5.x.x)  the message bounced: recorded, the address suppressed
          delayed (4.x.x)           recorded, nothing suppressed
          an abuse report (RFC 5965) recorded, the address suppressed
        The report is matched only by the tag in the address it came back to (keyed: it cannot be
        forged), never by the addresses it mentions. Anything else that reaches the bounce address
        (a vacation reply, spam, a report for mail that is gone) is ignored with the reason, and
        the command still exits 0, so the relay does not send it back. An mbox "From " line first
        is skipped. The same is POST /v1/admin/bounces with the raw message.

        Exit codes: 0 taken or ignored, 65 an empty or unreadable message, 69 the database is down.

        """

    static let options: [OptionDeclaration] = [.flag("json", "print the outcome as one JSON object")]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["take"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    func validate() throws(CommandFailure) {
        guard arguments.words.count >= 2, arguments.words[1] == "take", arguments.words.count <= 3 else {
            throw CommandFailure(code: .usage, message: "bounces needs take [FILE]; see postern bounces --help")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let path = arguments.words.count == 3 ? arguments.words[2] : "-"
        let raw: [UInt8]
        if path == "-" {
            raw = Array(FileHandle.standardInput.readDataToEndOfFile().prefix(DeliveryReport.maximumSize + 1))
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(code: .badInput, message: "cannot read \(path)")
            }
            raw = Array(data)
        }
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let result = try flow { () throws(AuthError) in try flows.service.bounces.take(raw) }
        if arguments.switches.contains("json") {
            printBody(BounceResultBody(result))
        } else {
            var line = result.outcome.rawValue
            if let id = result.messageID { line += "\tmessage \(id)" }
            if let status = result.status { line += "\t\(status)" }
            if let reason = result.reason { line += "\t\(reason)" }
            print(line)
        }
        return ExitCode.success.rawValue
    }
}
