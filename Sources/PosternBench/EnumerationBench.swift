import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternStore
import PosternTestSupport

/// `postern-bench enumeration [calls]`: for send-link, sign-up, reset and password sign-in, `calls`
/// calls for addresses that have an account and as many for addresses that do not, interleaved,
/// through the flows over a real SQLite file. Compares the answers byte for byte and the latencies
/// (medians, two-sample Kolmogorov–Smirnov). Prints one `name key=value…` line per endpoint; then
/// the same for a refused sign-up against an accepted one (`refused_send_link`, `refused_sign_up`:
/// new addresses, to a service with `--sign-up closed` and to one with `open`, over one store), whose
/// lines name the two samples `existing` (accepted) and `unknown` (refused) as the others do.
enum EnumerationBench {
    /// `postern-bench enumeration-seed DB N`: N accounts member<i>@example.com with the password
    /// "the real password" (scrypt log2 N = 12), for the HTTP run against `postern serve`.
    static func seed(_ arguments: ArraySlice<String>) throws {
        guard let path = arguments.first, let count = arguments.dropFirst().first.flatMap(Int.init) else {
            throw CancellationError()
        }
        try seed(try SQLiteStore(path: path), count: count)
    }

    /// Inserts `count` accounts `member<i>@example.com` with the password "the real password".
    static func seed(_ store: SQLiteStore, count: Int) throws {
        let passwordHash = try PasswordHasher(logN: 12, blockSize: 8, parallelism: 1).hash("the real password")
        let now = SystemClock().unixSeconds()
        try store.write { tx in
            for index in 0..<count {
                try tx.insertAccount(
                    Account(uid: "uid-\(index)", email: try EmailAddress.parse("member\(index)@example.com"), emailVerified: true,
                            passwordHash: passwordHash, createdAt: now, providers: [.password]))
            }
        }
    }

    static func run(_ arguments: ArraySlice<String>) throws {
        let calls = arguments.first.flatMap(Int.init) ?? 2000
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-enum-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("postern.db").path
        let store = try SQLiteStore(path: path)
        let clock = SystemClock()
        let vault = KeyVault(
            store: store, box: try MasterKeyFile.loadOrCreate(at: MasterKeyFile.path(forDatabase: path)), clock: clock,
            maxCodeLifetime: 86_400)
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
        config.mailInterval = 0
        config.mailPerHour = 0
        // The mail caps on, so every write counts them as a daemon's does, but out of reach.
        config.mailCaps = MailCapConfiguration(domainPerHour: 1_000_000_000, totalPerHour: 1_000_000_000)
        // The challenge always asked, so every request that mails is checked and its solution
        // recorded as a daemon's are; solved before the clock starts, at a difficulty that keeps
        // the run short (the server's check costs the same at any difficulty: one hash, one HMAC).
        config.challenge = ChallengeConfiguration(mode: .always, difficulty: 1_000)
        // Real scrypt work, at parameters that keep the run short; the dummy hash uses the same.
        let hasher = PasswordHasher(logN: 12, blockSize: 8, parallelism: 1)
        let service = try AuthService(
            store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config,
            hasher: hasher)
        // The same daemon with sign-ups closed: its answer to a new address is a refused sign-up.
        var closedConfig = config
        closedConfig.signUp = SignUpPolicy(mode: .closed)
        let closed = try AuthService(
            store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: closedConfig, hasher: hasher)

        try seed(store, count: calls)
        let existing = (0..<calls).map { "member\($0)@example.com" }
        let unknown = (0..<calls).map { "stranger\($0)@example.com" }
        let newcomers = (0..<calls).map { "newcomer\($0)@example.com" }
        let refused = (0..<calls).map { "refused\($0)@example.com" }

        let gate = service.challenges
        let pass = { (solution: String?) throws(AuthError) -> ChallengePass in try gate.check(solution: solution, clientIP: "192.0.2.10") }
        let closedPass = { (solution: String?) throws(AuthError) -> ChallengePass in
            try closed.challenges.check(solution: solution, clientIP: "192.0.2.10")
        }
        // Each endpoint: whether it sends (and so needs a solution), and the call.
        let addressed: [(String, Bool, (String, String?) -> String)] = [
            ("send_link", true, { email, solution in
                answer { try service.emailLink.send(EmailLinkRequest(email: email, challengePass: try pass(solution))) }
            }),
            ("sign_up", true, { email, solution in
                answer {
                    try service.passwords.signUp(
                        email: email, password: "a fine password", idToken: nil, continueURL: nil, locale: nil, challengePass: try pass(solution))
                }
            }),
            ("reset", true, { email, solution in
                answer { try service.passwords.requestReset(email: email, continueURL: nil, locale: nil, challengePass: try pass(solution)) }
            }),
            ("password_sign_in", false, { email, _ in
                answer {
                    _ = try service.passwords.signIn(email: email, password: "a wrong password", idToken: nil, allowMigration: false)
                }
            }),
        ]
        // Each line: its name, whether it sends, and the call of the first sample (an existing account,
        // or an accepted sign-up) or the second (no account, or a refused sign-up) for index i.
        var endpoints: [(String, Bool, (Bool, Int, String?) -> String)] = addressed.map { name, sends, call in
            (name, sends, { first, i, solution in call(first ? existing[i] : unknown[i], solution) })
        }
        endpoints += [
            ("refused_send_link", true, { accepted, i, solution in
                answer {
                    let flows = accepted ? service : closed
                    let check = accepted ? pass : closedPass
                    try flows.emailLink.send(EmailLinkRequest(email: accepted ? newcomers[i] : refused[i], challengePass: try check(solution)))
                }
            }),
            ("refused_sign_up", true, { accepted, i, solution in
                answer {
                    let flows = accepted ? service : closed
                    let check = accepted ? pass : closedPass
                    try flows.passwords.signUp(
                        email: accepted ? newcomers[i] : refused[i], password: "a fine password", idToken: nil, continueURL: nil, locale: nil,
                        challengePass: try check(solution))
                }
            }),
        ]
        /// A solved challenge for an endpoint that sends, nil for one that does not.
        func solution(_ sends: Bool) throws -> String? {
            guard sends else { return nil }
            guard case .proofOfWork(let challenge) = try gate.offer(), let payload = ProofOfWorkSolver.payload(challenge) else {
                throw AuthError.internalError("no proof of work to solve")
            }
            return payload
        }
        for (name, sends, call) in endpoints {
            // Warm up both paths.
            for i in 0..<20 { _ = call(true, i, try solution(sends)); _ = call(false, i, try solution(sends)) }
            var timesA: [Double] = []
            var timesB: [Double] = []
            var answersA = Set<String>()
            var answersB = Set<String>()
            for i in 0..<calls {
                // Alternate which goes first, so neither always follows the other.
                let order = i % 2 == 0 ? [true, false] : [false, true]
                for isExisting in order {
                    let solved = try solution(sends)
                    let start = DispatchTime.now().uptimeNanoseconds
                    let result = call(isExisting, i, solved)
                    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1000
                    if isExisting { timesA.append(elapsed); answersA.insert(result) } else { timesB.append(elapsed); answersB.insert(result) }
                }
            }
            let medianA = median(timesA)
            let medianB = median(timesB)
            let (d, p) = kolmogorovSmirnov(timesA, timesB)
            let identical = answersA == answersB && answersA.count == 1
            print(
                "\(name) identical_answers=\(identical) answer=\(answersA.first ?? "?")"
                    + " median_existing_us=\(String(format: "%.1f", medianA)) median_unknown_us=\(String(format: "%.1f", medianB))"
                    + " median_diff=\(String(format: "%.3f", abs(medianA - medianB) / max(medianA, medianB)))"
                    + " ks_d=\(String(format: "%.4f", d)) ks_p=\(String(format: "%.4f", p))")
        }
    }

    /// The answer a caller would see: the HTTP status and body the daemon sends for this outcome.
    static func answer(_ body: () throws -> Void) -> String {
        do {
            try body()
            return #"202 {"status":"sent"}"#
        } catch let error as AuthError {
            return "\(error.kind) \(error.code) \(error.message)"
        } catch {
            return "500 \(error)"
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Two-sample Kolmogorov–Smirnov statistic D and its asymptotic p-value.
    static func kolmogorovSmirnov(_ a: [Double], _ b: [Double]) -> (Double, Double) {
        let x = a.sorted()
        let y = b.sorted()
        var i = 0
        var j = 0
        var d = 0.0
        while i < x.count && j < y.count {
            let value = min(x[i], y[j])
            while i < x.count && x[i] <= value { i += 1 }
            while j < y.count && y[j] <= value { j += 1 }
            d = max(d, abs(Double(i) / Double(x.count) - Double(j) / Double(y.count)))
        }
        let n = Double(x.count * y.count) / Double(x.count + y.count)
        let lambda = (n.squareRoot() + 0.12 + 0.11 / n.squareRoot()) * d
        var p = 0.0
        for k in 1...100 {
            let term = 2 * (k % 2 == 1 ? 1.0 : -1.0) * exp(-2 * Double(k * k) * lambda * lambda)
            p += term
            if abs(term) < 1e-10 { break }
        }
        return (d, min(max(p, 0), 1))
    }
}
