import PosternAssembly
import PosternCore

/// `postern maintenance run`: one housekeeping round now, for operators who prefer cron to the
/// daemon's loop (both may run: on PostgreSQL one round at a time, the other skips).
struct MaintenanceCommand: Subcommand {
    static let name = "maintenance"
    static let abstract = "delete what has expired now (the round postern serve runs every minute)"
    static let usage = """
        Usage: postern maintenance run [--json]

        Runs one housekeeping round now and prints how many rows it removed, per table:
          action_requests  requests for emailed actions, an hour after they expired
          consumed_codes   the single-use ledger: an entry when its code expires, never before
          refresh_tokens   at their expiry (rotated and revoked ones too)
          outbox           sent and dead mail, --retention-days after it finished (default 30)
          rate_events      rate-limit events older than their hour
          rate_windows     SMS cap counters whose window started a day ago
          guess_budgets    wrong-guess counts quiet for 7 days
          sessions         the sessions users see, at their refresh token's expiry
          account_activity accounts' activity, --activity-days after it happened (default 90)
        It deletes in transactions of 500 rows, so a running daemon keeps answering; on SQLite it
        then gives freed pages back to the file system (incremental vacuum). On PostgreSQL, when
        another daemon's round is running, it skips the round and says so (exit 0).

        """

    static let options: [OptionDeclaration] = [.flag("json", "print the rows removed as one JSON object")]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["run"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words == ["maintenance", "run"] else {
            throw CommandFailure(code: .usage, message: "maintenance needs run; see postern maintenance --help")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        // The store only: no keys, templates or transport.
        let storage = try startup { () throws(StartupError) in try PosternStorage(settings: settings) }
        defer { storage.store.close() }
        let round: HousekeepingRound
        do {
            round = try storage.housekeeper(settings: settings).runRound()
        } catch {
            throw CommandFailure(code: .unavailable, message: "housekeeping failed: \(error)")
        }
        let tables = ExpiringRows.allCases
        if arguments.switches.contains("json") {
            printJSON([
                "skipped": round.skipped, "unfinished": round.unfinished, "total": round.total,
                "removed": Dictionary(uniqueKeysWithValues: tables.map { ($0.rawValue, round.removed[$0] ?? 0) }),
            ] as [String: Any])
        } else if round.skipped {
            print("skipped: another daemon's housekeeping round is running")
        } else {
            for rows in tables { print("\(rows.rawValue)\t\(round.removed[rows] ?? 0)") }
            print("removed \(round.total) row(s)" + (round.unfinished ? "; more are left for the next round" : ""))
        }
        return ExitCode.success.rawValue
    }
}
