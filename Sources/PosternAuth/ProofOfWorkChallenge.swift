import Foundation
import PosternAPI

/// What `GET /v1/challenge` offers to solve before a request that sends mail or SMS, when the
/// server asks for one (`PosternAuthError.challengeRequired`).
public enum ChallengeOffer: Sendable, Hashable {
    /// The built-in proof of work (kind `altcha`): solve it on the device with
    /// `ProofOfWorkChallenge.solve()`, no person needed.
    case proofOfWork(ProofOfWorkChallenge)
    /// A CAPTCHA (`service` is `turnstile`, `hcaptcha` or `recaptcha`): the app shows the
    /// service's widget with `siteKey` and sends the widget's token as the solution.
    case captcha(service: String, siteKey: String)
}

/// The server's proof of work in ALTCHA's classic format: find `number` in 0…`maxnumber` with
/// lower-case hex `SHA-256(salt + number)` equal to `challenge`. The solution goes back with the
/// request as `challengeSolution:`, once: each solution buys one request.
public struct ProofOfWorkChallenge: Sendable, Hashable, Codable {
    /// The hash function; Postern mints only "SHA-256".
    public var algorithm: String
    /// The lower-case hex SHA-256 of `salt` followed by the secret number's decimal digits.
    public var challenge: String
    /// The largest number to try (the server's `--challenge-difficulty`).
    public var maxnumber: Int64
    /// The salt, with the challenge's expiry in it (`<24 hex>?expires=<seconds>&`).
    public var salt: String
    /// The server's signature of `challenge`, sent back unchanged.
    public var signature: String

    /// A challenge with these fields, as `GET /v1/challenge` answers them.
    public init(algorithm: String, challenge: String, maxnumber: Int64, salt: String, signature: String) {
        self.algorithm = algorithm
        self.challenge = challenge
        self.maxnumber = maxnumber
        self.salt = salt
        self.signature = signature
    }

    /// The kind the server names the proof of work by (`challengeRequired(kind: "altcha", …)`).
    public static let kind = "altcha"

    /// How many numbers are tried between two looks at the task's cancellation.
    static let triesPerCheck: Int64 = 4096

    /// Solves the challenge by trying 0, 1, 2, … (half of `maxnumber` hashes on average; see
    /// docs/client.md for the rate) and answers the ALTCHA payload the server takes as
    /// `challengeSolution`: base64 of the JSON object with `algorithm`, `challenge`, `number`,
    /// `salt`, `signature` and `took` (milliseconds) — what the ALTCHA widget submits. Runs off the
    /// caller's actor and yields every few thousand tries.
    /// - Throws: `.cancelled` when the task is cancelled (looked at every 4,096 tries);
    ///   `.protocolMismatch` (`UNSUPPORTED_CHALLENGE`) for an algorithm other than SHA-256 or a
    ///   challenge that is not 64 hex digits, (`UNSOLVABLE_CHALLENGE`) when no number up to
    ///   `maxnumber` fits; `.invalidArgument` where the platform offers no SHA-256.
    public func solve() async throws(PosternAuthError) -> String {
        let started = ContinuousClock.now
        let number = try await search()
        let elapsed = (ContinuousClock.now - started).components
        let took = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        let solution = ProofOfWorkSolution(
            algorithm: algorithm, challenge: challenge, number: number, salt: salt, signature: signature, took: took)
        return Data(APIJSON.encode(solution)).base64EncodedString()
    }

    /// The number that solves the challenge (see `solve()`).
    /// - Throws: as `solve()`.
    func search() async throws(PosternAuthError) -> Int64 {
        var search = try ProofOfWorkSearch(self)
        while true {
            if let number = try search.advance(tries: Self.triesPerCheck) { return number }
            if search.isExhausted {
                throw .protocolMismatch(status: 200, code: "UNSOLVABLE_CHALLENGE", message: "No number up to the challenge's maxnumber solves it.")
            }
            if Task.isCancelled { throw .cancelled }
            await Task.yield()
        }
    }

    /// Adds one to the decimal number that `bytes` holds from `start` on.
    static func increment(_ bytes: inout [UInt8], digitsFrom start: Int) {
        var index = bytes.count - 1
        while index >= start {
            if bytes[index] != UInt8(ascii: "9") {
                bytes[index] += 1
                return
            }
            bytes[index] = UInt8(ascii: "0")
            index -= 1
        }
        bytes.insert(UInt8(ascii: "1"), at: start)
    }

    /// The bytes of a hex string (either case); nil when it is not one.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// The search for a challenge's number, a run of tries at a time (between them the solver looks at
/// its task): the salt, then the number's decimal digits, counted up in place — no allocation a try.
struct ProofOfWorkSearch {
    private var input: [UInt8]
    private let digitsStart: Int
    private var digest = [UInt8](repeating: 0, count: 32)
    private let target: [UInt8]
    private let maxnumber: Int64
    /// The next number to try.
    private(set) var next: Int64 = 0

    /// A search for `challenge`'s number from 0.
    /// - Throws: `.protocolMismatch` (`UNSUPPORTED_CHALLENGE`) for another algorithm than SHA-256 or
    ///   a challenge that is not 64 hex digits.
    init(_ challenge: ProofOfWorkChallenge) throws(PosternAuthError) {
        guard challenge.algorithm.uppercased() == "SHA-256" else {
            throw .protocolMismatch(status: 200, code: "UNSUPPORTED_CHALLENGE", message: "The challenge's algorithm is not SHA-256.")
        }
        guard let target = ProofOfWorkChallenge.bytes(hex: challenge.challenge), target.count == 32 else {
            throw .protocolMismatch(status: 200, code: "UNSUPPORTED_CHALLENGE", message: "The challenge is not a SHA-256 in hex.")
        }
        self.target = target
        input = Array(challenge.salt.utf8) + [UInt8(ascii: "0")]
        digitsStart = input.count - 1
        maxnumber = challenge.maxnumber
    }

    /// Whether every number up to `maxnumber` was tried.
    var isExhausted: Bool { next > maxnumber }

    /// Tries at most `tries` more numbers; the one that solves the challenge, or nil.
    /// - Throws: `.invalidArgument` where the platform offers no SHA-256.
    mutating func advance(tries: Int64) throws(PosternAuthError) -> Int64? {
        let last = min(maxnumber, next &+ tries &- 1)
        while next <= last {
            let hashed = input.withUnsafeBufferPointer { bytes in digest.withUnsafeMutableBufferPointer { SHA256Digest.hash(bytes, into: $0) } }
            guard hashed else { throw .invalidArgument("Solving a challenge needs SHA-256, and this platform offers none.") }
            if digest == target { return next }
            next += 1
            ProofOfWorkChallenge.increment(&input, digitsFrom: digitsStart)
        }
        return nil
    }
}

/// The ALTCHA payload's JSON (`APIJSON` sorts the keys: the order ALTCHA's widget writes them).
struct ProofOfWorkSolution: Sendable, Hashable, Codable {
    var algorithm: String
    var challenge: String
    var number: Int64
    var salt: String
    var signature: String
    /// Milliseconds the search took (ALTCHA's field; the server ignores it).
    var took: Int64
}
