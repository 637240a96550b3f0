import Foundation
import PosternAPI

extension PosternAuth {
    // MARK: The challenge (a server with --challenge)

    /// Fetches a challenge to solve before a request that sends mail or SMS (`GET /v1/challenge`):
    /// the built-in proof of work, or the CAPTCHA the server is configured with. Each solution
    /// buys one request; a challenge expires (`--challenge-lifetime`, 5 minutes by default).
    /// - Throws: `.protocolMismatch` when the answer is neither; network and server failures.
    public func challenge() async throws(PosternAuthError) -> ChallengeOffer {
        let answer = try await transport.send("GET", "/v1/challenge", body: Optional<EmptyBody>.none, as: ChallengeBody.self)
        if answer.kind == ProofOfWorkChallenge.kind, let algorithm = answer.algorithm, let challenge = answer.challenge,
           let maxnumber = answer.maxnumber, let salt = answer.salt, let signature = answer.signature {
            return .proofOfWork(
                ProofOfWorkChallenge(algorithm: algorithm, challenge: challenge, maxnumber: maxnumber, salt: salt, signature: signature))
        }
        if answer.kind != ProofOfWorkChallenge.kind, let siteKey = answer.siteKey {
            return .captcha(service: answer.kind, siteKey: siteKey)
        }
        throw .protocolMismatch(status: 200, code: "UNREADABLE_ANSWER", message: "The challenge is neither a proof of work nor a CAPTCHA.")
    }

    /// Fetches the server's proof of work and solves it: a `challengeSolution` for the next
    /// request that sends mail or SMS (an app that solves ahead, while the user types).
    /// - Throws: `.challengeRequired` with the CAPTCHA's kind and site key when the server offers
    ///   a CAPTCHA (the app must show its widget); as `challenge()` and `ProofOfWorkChallenge.solve()`.
    public func solveChallenge() async throws(PosternAuthError) -> String {
        switch try await challenge() {
        case .proofOfWork(let work): return try await work.solve()
        case .captcha(let service, let siteKey): throw .challengeRequired(kind: service, siteKey: siteKey)
        }
    }

    /// Sends a request that may need a solved challenge: when the server answers
    /// `challengeRequired(kind: "altcha", …)` and `Configuration.solvesProofOfWork` is on, fetches
    /// and solves a proof of work and sends once more with it — once: a second refusal is thrown.
    /// - Throws: what `request` throws, or what solving throws.
    func solvingChallenge<Answer>(
        _ solution: String?, _ request: (String?) async throws(PosternAuthError) -> Answer
    ) async throws(PosternAuthError) -> Answer {
        do {
            return try await request(solution)
        } catch .challengeRequired(let kind, let siteKey) {
            guard configuration.solvesProofOfWork, kind == ProofOfWorkChallenge.kind else {
                throw .challengeRequired(kind: kind, siteKey: siteKey)
            }
            return try await request(try await solveChallenge())
        }
    }
}
