import Foundation
import PosternAPI
import PosternCrypto

/// What a public request that sends mail or SMS brings to the gate: the client's IP and, when it
/// sent one, its checked solution. Made only by ``ChallengeGate/check(solution:clientIP:)``;
/// ``none`` is a caller that said nothing (it is asked to solve whenever the gate asks anyone).
public struct ChallengePass: Sendable {
    let clientIP: String?
    /// The accepted solution's once-key and when it may be forgotten.
    let solution: (onceKey: [UInt8], expiresAt: Int64)?

    /// No client IP and no solution: what callers other than the public endpoints pass.
    public static let none = ChallengePass(clientIP: nil, solution: nil)
}

/// What `GET /v1/challenge` hands out.
public enum ChallengeOffer: Sendable {
    /// The built-in proof of work, in ALTCHA's format.
    case proofOfWork(ProofOfWorkChallenge)
    /// A CAPTCHA service's widget, with the site's public key.
    case captcha(CaptchaService, siteKey: String)
}

/// The challenge on the public requests that send mail or SMS (send-link, sign-up, reset, phone
/// sign-in, the hosted sign-in page; `--challenge`), issue 47: a bot that wants Postern to mail
/// strangers must pay for each mail with a solved proof of work or CAPTCHA, and each solution
/// buys one request.
///
/// In two steps. Before the request's write, ``check(solution:clientIP:)`` verifies a solution the
/// client sent (the proof of work's hash and signature in µs; a CAPTCHA token with its service,
/// over the network). Inside the write that queues the mail, ``admit(_:domain:now:tx:)`` decides:
/// with a solution, it is recorded as used (a second use is refused: the unique key of the
/// used-once ledger decides between daemons); without one, `always` refuses, and `when-limited`
/// counts the request against its client IP's and its recipient domain's hourly thresholds and
/// refuses past either. The refusal (``AuthError/challengeRequired(kind:siteKey:refusal:)``)
/// depends only on the IP, the domain and the solution — never on whether the address has an
/// account — and its throw rolls the write back, so nothing is queued.
public final class ChallengeGate: Sendable {
    /// Which way a request went through the gate (the label of `postern_challenges_total`).
    public enum Outcome: String, Sendable, CaseIterable {
        /// Asked to solve (no solution, or one refused).
        case asked
        /// Came with a solution that was accepted.
        case solved
        /// Came with a solution that was refused (wrong, expired, used, or the CAPTCHA said no).
        case refused
    }

    /// The settings.
    public let configuration: ChallengeConfiguration
    let keys: KeyRingCache
    let clock: any WallClock
    let captcha: CaptchaVerifier?
    private let counts: [MetricCounter] = Outcome.allCases.map { _ in MetricCounter() }

    /// The gate of `configuration`; `http` reaches a CAPTCHA service (needed when one is configured).
    /// - Throws: `AuthError.internalError` when a CAPTCHA is configured without its key, secret or a client.
    init(configuration: ChallengeConfiguration, keys: KeyRingCache, clock: any WallClock, http: (any ProviderHTTP)?) throws(AuthError) {
        self.configuration = configuration
        self.keys = keys
        self.clock = clock
        if let service = configuration.captcha {
            guard let secret = configuration.captchaSecret, configuration.captchaSiteKey != nil, let http else {
                throw .internalError("--captcha \(service.rawValue) needs --captcha-site-key, --captcha-secret-file and an HTTP client")
            }
            captcha = CaptchaVerifier(
                service: service, secret: secret, url: configuration.captchaVerifyURL ?? service.verifyURL, http: http,
                hostnames: configuration.captchaHostnames, minimumScore: configuration.captchaMinimumScore)
        } else {
            captcha = nil
        }
    }

    /// Whether checking a solution may wait on the network (a CAPTCHA service): the HTTP server
    /// then answers the gated requests on threads that may wait.
    public var verifiesOverNetwork: Bool { configuration.mode != .off && captcha != nil }

    /// `(outcome, count)` for every outcome, zero included.
    public func snapshot() -> [(outcome: String, count: Int)] {
        zip(Outcome.allCases, counts).map { (outcome: $0.rawValue, count: $1.count) }
    }

    private func count(_ outcome: Outcome) {
        counts[Outcome.allCases.firstIndex(of: outcome) ?? 0].increment()
    }

    /// The proof of work under the key ring's active action-code key (a key of its own, derived).
    private func proofOfWork(_ ring: KeyRing) throws(AuthError) -> ProofOfWork {
        let derived = ring.actionCodes.activeMAC.authenticate(Array("postern-challenge-key".utf8))
        do {
            return ProofOfWork(key: try HMACKey(key: derived), difficulty: configuration.difficulty, lifetime: configuration.lifetime)
        } catch {
            throw .internalError("challenge key: \(error)")
        }
    }

    /// A challenge to solve: a fresh proof of work, or the CAPTCHA's site key.
    public func offer() throws(AuthError) -> ChallengeOffer {
        if let captcha, let siteKey = configuration.captchaSiteKey { return .captcha(captcha.service, siteKey: siteKey) }
        return .proofOfWork(try proofOfWork(keys.current).mint(now: clock.unixSeconds()))
    }

    /// The refusal a request without an acceptable solution gets.
    func required(_ refusal: ChallengeRefusal? = nil) -> AuthError {
        count(refusal == nil ? .asked : .refused)
        return .challengeRequired(kind: configuration.kind, siteKey: captcha == nil ? nil : configuration.captchaSiteKey, refusal: refusal)
    }

    /// Checks the solution a request sent, before its write. A missing or empty solution passes
    /// (the write decides whether one was needed); with the challenge off any solution is ignored.
    /// - Throws: `invalidArgument` for one longer than the contract allows (whatever the mode);
    ///   `challengeRequired` for a solution that is not accepted; `unavailable` when the CAPTCHA
    ///   service cannot be asked.
    public func check(solution: String?, clientIP: String?) throws(AuthError) -> ChallengePass {
        if let solution, solution.count > WireLimits.challengeSolutionMaximumLength {
            throw .invalidArgument("challengeSolution is at most \(WireLimits.challengeSolutionMaximumLength) characters.")
        }
        guard configuration.mode != .off, let solution, !solution.isEmpty else { return ChallengePass(clientIP: clientIP, solution: nil) }
        let now = clock.unixSeconds()
        if let captcha {
            switch try captcha.verify(solution, clientIP: clientIP, now: now) {
            case .success(let accepted): return ChallengePass(clientIP: clientIP, solution: accepted)
            case .failure(let refusal): throw required(refusal)
            }
        }
        let work = try proofOfWork(keys.current)
        do throws(ChallengeRefusal) {
            return ChallengePass(clientIP: clientIP, solution: try work.verify(solution, now: now))
        } catch {
            throw required(error)
        }
    }

    /// Decides, in the write that queues the mail or SMS, whether the request may go on: see the
    /// type's description. `domain` is the recipient's counted domain (``CanonicalAddress/domain``),
    /// nil for an SMS.
    /// - Throws: `challengeRequired` (the caller's write must roll back); a store failure as it comes.
    /// `thresholdsCounted`: the `when-limited` thresholds were counted already, outside the
    /// transaction (``countThresholds(_:domain:now:counts:)``, on a store several daemons share).
    func admit(
        _ pass: ChallengePass, domain: String?, now: Int64, tx: any LimitWriter & ProviderIdentityWriter, thresholdsCounted: Bool = false
    ) throws {
        let configuration = configuration
        guard configuration.mode != .off else { return }
        if let solution = pass.solution {
            guard try tx.useProviderToken(hash: solution.onceKey, expiresAt: solution.expiresAt) else { throw required(.used) }
            count(.solved)
            return
        }
        guard configuration.mode == .whenLimited else { throw required() }
        guard !thresholdsCounted else { return }
        try countThresholds(pass, domain: domain) { bucket, limit in
            try tx.countInWindow(bucket: bucket, now: now, window: RateLimitPolicy.window, limit: limit) == nil
        }
    }

    /// The `when-limited` thresholds of a request without a solution, counted before its write on
    /// a store several daemons share (``SharedWindowCounts``; ``admit(_:domain:now:tx:thresholdsCounted:)``
    /// then counts nothing). Returns what it counted, for the caller to put back if the request is
    /// then not made.
    /// - Throws: `challengeRequired` past a threshold (nothing stays counted); `unavailable`.
    func countThresholds(
        _ pass: ChallengePass, domain: String?, now: Int64, counts: SharedWindowCounts
    ) throws -> [SharedWindowCounts.Counted] {
        guard configuration.mode == .whenLimited, pass.solution == nil else { return [] }
        var counted: [SharedWindowCounts.Counted] = []
        do {
            try countThresholds(pass, domain: domain) { bucket, limit in
                guard let one = try counts.count(bucket, now: now, window: RateLimitPolicy.window, limit: limit) else { return false }
                counted.append(one)
                return true
            }
        } catch {
            counts.uncount(counted)
            throw error
        }
        return counted
    }

    /// The thresholds ``countThresholds(_:domain:now:counts:)`` would count for `pass`, for a
    /// ``SharedWindowCounts/restock(_:now:)`` ahead of it (none with a solution, or unless `when-limited`).
    func thresholdsWanted(_ pass: ChallengePass, domain: String?) -> [SharedWindowCounts.Wanted] {
        guard configuration.mode == .whenLimited, pass.solution == nil else { return [] }
        var wanted: [SharedWindowCounts.Wanted] = []
        try? countThresholds(pass, domain: domain) { bucket, limit in
            wanted.append(.init(bucket: bucket, limit: limit))
            return true
        }
        return wanted
    }

    /// The client IP's threshold, then the domain's, each counted by `count` (bucket, limit →
    /// whether it was counted: false past the threshold).
    private func countThresholds(_ pass: ChallengePass, domain: String?, count: ([UInt8], Int64) throws -> Bool) throws {
        let ring = keys.lastLoaded
        func over(_ kind: String, _ text: String, limit: Int64) throws -> Bool {
            guard limit > 0 else { return false }
            return try !count(Array(ring.actionCodes.activeMAC.authenticate(Array("postern-challenge|\(kind)|\(text)".utf8)).prefix(16)), limit)
        }
        if let ip = pass.clientIP, try over("ip", ip, limit: configuration.ipPerHour) { throw required() }
        if let domain, try over("domain", domain, limit: configuration.domainPerHour) { throw required() }
    }
}
