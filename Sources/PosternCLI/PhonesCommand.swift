import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern phones show|remove`: an account's phone claims, as its parties see them (the number
/// only as `+49…`), and removing one (a verified number is free again).
struct PhonesCommand: Subcommand {
    static let name = "phones"
    static let abstract = "show a user's phone numbers (redacted) or remove one"
    static let usage = """
        Usage: postern phones show   --email ADDR | --uid UID [--json]
               postern phones remove --claim CLAIM_ID
        show lists the account's phone claims: pending, awaiting the owner's approval or a
        transfer, verified, expired; a number shows only as its country code (+49…), never in full.
        remove deletes one claim (a verified number is then free for another account); the
        account's owner and the number's holder can do the same through the API.
        """

    static let options: [OptionDeclaration] = [
        .value("email", "ADDR", "show: the account by address"),
        .value("uid", "UID", "show: the account by uid"),
        .value("claim", "ID", "remove: the claim to remove"),
        .flag("json", "show: print JSON"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["show", "remove"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    func validate() throws(CommandFailure) {
        guard arguments.words.count == 2, ["show", "remove"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "phones needs show or remove; see postern phones --help")
        }
        if arguments.words[1] == "show" {
            guard arguments.options["email"] != nil || arguments.options["uid"] != nil else {
                throw CommandFailure(code: .usage, message: "give --email ADDR or --uid UID")
            }
        } else {
            guard let claim = arguments.options["claim"], !claim.isEmpty else {
                throw CommandFailure(code: .usage, message: "give --claim CLAIM_ID (postern phones show lists them)")
            }
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let service = flows.service
        if arguments.words[1] == "remove" {
            let claim = arguments.options["claim"] ?? ""
            guard try flow({ () throws(AuthError) in try service.phoneOperator.remove(claimID: claim) }) else {
                throw CommandFailure(code: .badInput, message: "no such phone claim")
            }
            print("removed \(claim)")
            return ExitCode.success.rawValue
        }
        let found: UserRecord?
        if let email = arguments.options["email"] {
            found = try flow { () throws(AuthError) in try service.operators.user(email: email) }
        } else {
            let uid = arguments.options["uid"] ?? ""
            found = try flow { () throws(AuthError) in try service.operators.user(uid: uid) }
        }
        guard let user = found else { throw CommandFailure(code: .badInput, message: "no such user") }
        let claims = try flow { () throws(AuthError) in try service.phoneOperator.list(uid: user.uid) }
        if arguments.switches.contains("json") {
            printBody(PhoneClaimListBody(claims: claims.map(PhoneClaimBody.init)))
        } else if claims.isEmpty {
            print("no phone numbers")
        } else {
            for claim in claims {
                var line = "\(claim.claimID)  \(claim.phoneNumber)  \(claim.status.rawValue)"
                if let verified = claim.verifiedAt { line += "  verified \(isoDate(verified))" }
                if let due = claim.transferDueAt { line += "  moves \(isoDate(due))" }
                if let asked = claim.releaseRequestedUntil { line += "  asked for by another account until \(isoDate(asked))" }
                if claim.awaitingRelease { line += "  moves only on the holding account's release" }
                print(line)
            }
        }
        return ExitCode.success.rawValue
    }
}
