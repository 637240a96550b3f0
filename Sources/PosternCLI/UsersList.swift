import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern users list`: the users newest first, read a page at a time (never the whole table
/// in memory) and printed as each page comes: a line per user, or JSON Lines.
struct UsersList {
    static let usage = """
               postern users list [--query Q] [--limit N] [--json]

        list    the users newest first (by creation time, then uid), a line each: uid, address
                (or -), created (UTC), last sign-in (or -), then `verified` and `disabled` where
                they hold. --query: the user with that uid and those whose address starts with
                it (case-insensitive). --limit: print at most N. --json: one User object a
                line (JSON Lines, the admin API's User). Read by pages of 1000, as
                GET /v1/admin/users pages them.

        """

    let arguments: ParsedArguments

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count == 2 else { throw CommandFailure(code: .usage, message: "users list takes no argument (--query Q to filter)") }
        if let option = arguments.given.first(where: ["email", "uid"].contains) {
            throw CommandFailure(code: .usage, message: "--\(option) is not for users list; use --query")
        }
        _ = try listLimit(arguments.options["limit"])
        if let query = arguments.options["query"], query.isEmpty {
            throw CommandFailure(code: .usage, message: "--query takes a uid or the start of an address")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let query = arguments.options["query"].map(UserQuery.init)
        let printed = try Self.stream(
            flows.service.operators, matching: query, limit: try listLimit(arguments.options["limit"]), json: arguments.switches.contains("json")
        ) { print($0) }
        if printed == 0 && !arguments.switches.contains("json") { print("no users") }
        return ExitCode.success.rawValue
    }

    /// Reads the users newest first a page at a time (at most ``OperatorTools/userPageLimit``,
    /// fewer when `limit` leaves fewer to print) and hands each line to `emit` as its page comes;
    /// returns how many were printed.
    /// - Throws: a `CommandFailure` when the store fails.
    static func stream(
        _ operators: OperatorTools, matching query: UserQuery?, limit: Int?, json: Bool, emit: (String) -> Void
    ) throws(CommandFailure) -> Int {
        try streamPages(pageLimit: OperatorTools.userPageLimit, limit: limit) { (after: UserCursor?, size) throws(CommandFailure) in
            let page = try flow { () throws(AuthError) in try operators.users(matching: query, after: after, limit: size) }
            return (page.users, page.next)
        } emit: { emit(line($0, json: json)) }
    }

    /// One user's line: tab-separated fields, or the admin API's User as JSON.
    static func line(_ user: UserRecord, json: Bool) -> String {
        if json { return String(decoding: APIJSON.encode(UserBody(user)), as: UTF8.self) }
        let flags = [user.emailVerified ? "verified" : nil, user.disabled ? "disabled" : nil].compactMap(\.self)
        return ([user.uid, user.email ?? "-", isoDate(user.createdAt), user.lastSignInAt.map(isoDate) ?? "-"] + flags).joined(separator: "\t")
    }
}
