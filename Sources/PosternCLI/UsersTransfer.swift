import Foundation
import PosternAssembly
import PosternCore
import PosternCrypto

/// `postern users import FILE --from …` and `postern users export`: moving accounts in from
/// Firebase, Supabase or another Postern, and out as JSON Lines.
struct UsersTransfer {
    static let usage = """
               postern users import FILE --from firebase|supabase|postern [--dry-run] [--strict] [--json]
                     [--batch-size N]   (default 500 rows per transaction)
                     --from firebase: --hash-key B64 | --hash-key-file PATH, --salt-separator B64,
                     --rounds N, --mem-cost N   (Console → Authentication → Users → ⋮ → Password hash parameters)
               postern users export [--output FILE]   (JSON Lines; standard output by default)

        import  keeps each uid; skips uids already there (re-running changes nothing); an address
                another account holds is a conflict and is never overwritten; a malformed row is
                reported by line and the rest imports (with --strict nothing does). Imported
                hashes verify as they are and are replaced by Postern's scrypt at the first
                password sign-in; accounts without one sign in by link. An account whose address
                is not verified comes without its password (nobody proved the address: whoever
                set it may not own it). A hash costing more than Postern's own check (scrypt
                N·r·p above --scrypt-log-n's, bcrypt above 10 + (--scrypt-log-n - 15)) is refused
                by row. The Firebase hash key is stored sealed under the master key, like the
                signing keys.
        export  every account with its hash as a PHC string; `import --from postern` restores it.

        """

    let arguments: ParsedArguments

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        _ = try arguments.settings()
        if arguments.words[1] == "export" {
            guard arguments.words.count == 2 else { throw CommandFailure(code: .usage, message: "users export takes no file; use --output FILE") }
            return
        }
        guard arguments.words.count == 3 else { throw CommandFailure(code: .usage, message: "users import needs one FILE") }
        guard let from = arguments.options["from"], let source = ImportSource(rawValue: from) else {
            throw CommandFailure(code: .usage, message: "users import needs --from firebase, supabase or postern")
        }
        if let size = arguments.options["batch-size"], Int(size).map({ (1...100_000).contains($0) }) != true {
            throw CommandFailure(code: .usage, message: "--batch-size takes a number from 1 to 100000")
        }
        if source == .firebase, arguments.options["hash-key"] != nil || arguments.options["hash-key-file"] != nil {
            _ = try firebaseParameters()
        }
    }

    /// The project's hash parameters, or nil when none are given.
    /// - Throws: a usage failure naming the option (never the key).
    private func firebaseParameters() throws(CommandFailure) -> FirebaseHashParameters? {
        var keyText = arguments.options["hash-key"]
        if let path = arguments.options["hash-key-file"] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(code: .usage, message: "--hash-key-file \(path): cannot read it")
            }
            keyText = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let keyText else { return nil }
        guard let key = Data(base64Encoded: keyText) else { throw CommandFailure(code: .usage, message: "--hash-key must be base64") }
        guard let separator = Data(base64Encoded: arguments.options["salt-separator"] ?? "") else {
            throw CommandFailure(code: .usage, message: "--salt-separator must be base64")
        }
        guard let rounds = arguments.options["rounds"].flatMap({ Int($0) }), let memCost = arguments.options["mem-cost"].flatMap({ Int($0) }) else {
            throw CommandFailure(code: .usage, message: "--hash-key needs --rounds N and --mem-cost N")
        }
        do {
            return try FirebaseHashParameters(signerKey: Array(key), saltSeparator: Array(separator), rounds: rounds, memCost: memCost)
        } catch {
            throw CommandFailure(code: .usage, message: "Firebase hash parameters: \(error)")
        }
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let storage = try startup { () throws(StartupError) in try PosternStorage(settings: settings) }
        _ = try startup { () throws(StartupError) in try storage.openKeys() }
        return arguments.words[1] == "export" ? try export(storage) : try importFile(storage, hasher: settings.passwordHasher)
    }

    private func export(_ storage: PosternStorage) throws -> Int32 {
        let output: FileHandle
        if let path = arguments.options["output"] {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else { throw CommandFailure(code: .badInput, message: "--output \(path): cannot write it") }
            output = handle
        } else {
            output = FileHandle.standardOutput
        }
        var after: String?
        var count = 0
        while true {
            let cursor = after
            // Each account's identities from the same snapshot as the account.
            let page = try storage.store.read { tx in
                try tx.accounts(after: cursor, limit: 1000).map { account in (account, try tx.providerIdentities(uid: account.uid)) }
            }
            guard let last = page.last?.0 else { break }
            output.write(Data(page.map { PosternExport.line($0.0, identities: $0.1) + "\n" }.joined().utf8))
            count += page.count
            after = last.uid
        }
        if arguments.options["output"] != nil {
            try output.close()
            print("exported \(count) account(s)")
        }
        return ExitCode.success.rawValue
    }

    /// `hasher`: the service's own, which bounds the cost of an imported hash.
    private func importFile(_ storage: PosternStorage, hasher: PasswordHasher) throws -> Int32 {
        let path = arguments.words[2]
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(code: .badInput, message: "\(path): cannot read it")
        }
        let source = ImportSource(rawValue: arguments.options["from"] ?? "") ?? .postern
        let dryRun = arguments.switches.contains("dry-run")
        var project: ExportReader.FirebaseProject?
        if source == .firebase, let parameters = try firebaseParameters() {
            let keyID = try storage.keyVault.firebaseHashKey(parameters.signerKey, dryRun: dryRun)
            project = .init(keyID: keyID, rounds: parameters.rounds, memCost: parameters.memCost, saltSeparator: parameters.saltSeparator)
        }
        let started = Date()
        let rows = ExportReader(
            source: source, firebase: project, now: Int64(started.timeIntervalSince1970),
            costBound: PasswordCostBound(own: hasher)
        ).rows(data)
        let progress = ImportProgress(total: rows.count, started: started)
        let summary = try AccountImporter(store: storage.store, batchSize: Int(arguments.options["batch-size"] ?? "500") ?? 500)
            .run(rows, strict: arguments.switches.contains("strict"), dryRun: dryRun, progress: progress.update)
        progress.finish()
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let rate = Int(Double(summary.imported) / seconds)
        if arguments.switches.contains("json") {
            let refusal = { (r: ImportSummary.Refusal) -> [String: Any] in ["line": r.line, "reason": r.reason] }
            printJSON([
                "rows": summary.rows, "imported": summary.imported, "skipped": summary.skipped,
                "passwordsDropped": summary.passwordsDropped,
                "conflicts": summary.conflicts.map(refusal), "malformed": summary.malformed.map(refusal),
                "dryRun": summary.dryRun, "abandoned": summary.abandoned, "seconds": (seconds * 1000).rounded() / 1000,
                "usersPerSecond": rate,
            ] as [String: Any])
        } else {
            let verb = summary.dryRun ? "would import" : "imported"
            print("\(verb) \(summary.imported), skipped \(summary.skipped) already there, \(summary.conflicts.count) conflict(s), \(summary.malformed.count) malformed — \(summary.rows) rows in \(String(format: "%.2f", seconds)) s (\(rate) users/s)")
            var reasons: [String: Int] = [:]
            for r in summary.malformed { reasons[r.reason, default: 0] += 1 }
            if summary.passwordsDropped > 0 {
                print("  \(summary.passwordsDropped) password(s) dropped: address not verified (those accounts sign in by link)")
            }
            for (reason, count) in reasons.sorted(by: { $0.key < $1.key }) { print("  malformed, \(reason): \(count)") }
            for r in summary.conflicts { print("  line \(r.line): conflict, \(r.reason)") }
            for r in summary.malformed { print("  line \(r.line): malformed, \(r.reason)") }
            if summary.abandoned { print("--strict: nothing imported") }
        }
        return summary.abandoned ? ExitCode.badInput.rawValue : ExitCode.success.rawValue
    }
}

/// A progress line on standard error while importing, when it is a terminal: rows done, rate and
/// time left.
final class ImportProgress {
    let total: Int
    let started: Date
    let enabled = isatty(STDERR_FILENO) == 1

    init(total: Int, started: Date) {
        self.total = total
        self.started = started
    }

    func update(_ done: Int) {
        guard enabled, total > 0 else { return }
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let left = rate > 0 ? Double(total - done) / rate : 0
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total)  \(Int(rate))/s  \(Int(left.rounded())) s left ".utf8))
    }

    func finish() {
        if enabled && total > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
