import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern users sessions UID [--json] [--revoke ID]` and `postern users activity UID [--json]`:
/// an account's sessions and activity as the admin API answers them.
struct UsersSessions {
    static let usage = """
               postern users sessions UID [--json] [--revoke ID]
               postern users activity UID [--limit N] [--json]

        sessions  the user's live sessions, newest first, a line each: id, device, network,
                  method (and the OpenID Connect client), created, last used (UTC). --revoke ID
                  ends that session (its refresh token), as the user's DELETE /v1/me/sessions/ID.
        activity  what happened to the account, newest first: time, kind, method, device,
                  network. --limit: print at most N (default all kept, --activity-days).
                  --json: one object a line (JSON Lines, as GET /v1/admin/users/UID/… answer).

        """

    let arguments: ParsedArguments

    private var uid: String? { arguments.words.count == 3 ? arguments.words[2] : nil }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard uid != nil else { throw CommandFailure(code: .usage, message: "users \(arguments.words[1]) takes the user's UID") }
        if arguments.words[1] == "activity", arguments.options["revoke"] != nil {
            throw CommandFailure(code: .usage, message: "--revoke is for users sessions")
        }
        if arguments.words[1] == "sessions", arguments.options["limit"] != nil {
            throw CommandFailure(code: .usage, message: "--limit is for users activity")
        }
        _ = try listLimit(arguments.options["limit"])
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        try validate()
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let operators = flows.service.operators
        let uid = uid ?? ""
        let json = arguments.switches.contains("json")
        if arguments.words[1] == "activity" {
            let printed = try Self.streamActivity(operators, uid: uid, limit: try listLimit(arguments.options["limit"]), json: json) { print($0) }
            if printed == 0 && !json { print("no activity") }
            return ExitCode.success.rawValue
        }
        if let id = arguments.options["revoke"] {
            try flow { () throws(AuthError) in try operators.revokeSession(uid: uid, id: id) }
            print("revoked \(id)")
            return ExitCode.success.rawValue
        }
        let sessions = try flow { () throws(AuthError) in try operators.sessions(uid: uid) }
        for session in sessions { print(Self.line(session, json: json)) }
        if sessions.isEmpty && !json { print("no sessions") }
        return ExitCode.success.rawValue
    }

    /// Reads the activity newest first a page at a time and hands each line to `emit`; returns
    /// how many were printed.
    /// - Throws: a `CommandFailure` for an unknown user or when the store fails.
    static func streamActivity(
        _ operators: OperatorTools, uid: String, limit: Int?, json: Bool, emit: (String) -> Void
    ) throws(CommandFailure) -> Int {
        try streamPages(pageLimit: SessionFlow.activityPageLimit, limit: limit) { (after: ActivityCursor?, size) throws(CommandFailure) in
            let page = try flow { () throws(AuthError) in try operators.activity(uid: uid, after: after, limit: size) }
            return (page.entries, page.next)
        } emit: { emit(line($0, json: json)) }
    }

    /// One session's line: tab-separated fields, or the admin API's DeviceSession as JSON.
    static func line(_ session: DeviceSession, json: Bool) -> String {
        if json { return String(decoding: APIJSON.encode(DeviceSessionBody(session, current: nil)), as: UTF8.self) }
        let method = session.clientID.map { "\(session.method) (\($0))" } ?? session.method
        return [session.id, session.deviceName ?? "-", session.network ?? "-", method, isoDate(session.createdAt), isoDate(session.lastUsedAt)]
            .joined(separator: "\t")
    }

    /// One activity entry's line.
    static func line(_ entry: ActivityEntry, json: Bool) -> String {
        if json {
            let body = ActivityEntryBody(
                at: UTCTimestamp.iso8601(entry.at), kind: entry.kind, method: entry.method, deviceName: entry.deviceName, network: entry.network)
            return String(decoding: APIJSON.encode(body), as: UTF8.self)
        }
        return [isoDate(entry.at), entry.kind, entry.method ?? "-", entry.deviceName ?? "-", entry.network ?? "-"].joined(separator: "\t")
    }
}
