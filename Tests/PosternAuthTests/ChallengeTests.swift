import Foundation
import PosternAPI
import Testing
@testable import PosternAuth

/// The challenge through the client against a real `postern serve --challenge always`: every
/// request that sends mail or SMS needs a solved proof of work, each solution buys one request.
@Suite("the challenge against a real server")
struct ChallengeTests {
    static let always = ["--challenge", "always"]

    @Test("without a solution: challengeRequired(altcha) and nothing queued; the app's own solution sends")
    func withoutSolution() async throws {
        let server = try await LiveServer(Self.always)
        let device = server.device(solvesProofOfWork: false)
        let refused = PosternAuthError.challengeRequired(kind: ProofOfWorkChallenge.kind, siteKey: nil)
        await #expect(throws: refused) { try await device.sendSignInLink(to: "bare@example.org") }
        await #expect(throws: refused) { try await device.signUp(email: "bare@example.org", password: "a long enough password") }
        await #expect(throws: refused) { try await device.resetPassword(for: "bare@example.org") }
        await #expect(throws: refused) { _ = try await device.requestApproval(for: "bare@example.org") }
        #expect(try await server.outboxCount() == 0)

        let solution = try await device.solveChallenge()
        try await device.sendSignInLink(to: "bare@example.org", challengeSolution: solution)
        #expect(try await server.outboxCount() == 1)
        let login = try await device.login(
            with: .emailCode(email: "bare@example.org", code: LiveServer.sixDigits(try await server.mail(to: "bare@example.org"))))
        #expect(login.isNewUser && login.email == "bare@example.org")
    }

    @Test("the convenience: send-link, sign-up, reset and the approval request solve, retry once and are sent")
    func convenience() async throws {
        let server = try await LiveServer(Self.always)
        let device = server.device()
        try await device.sendSignInLink(to: "solved@example.org")
        let code = try LiveServer.sixDigits(try await server.mail(to: "solved@example.org"))
        #expect(try await device.login(with: .emailCode(email: "solved@example.org", code: code)).isNewUser)
        await device.signOut()
        try await device.signUp(email: "new@example.org", password: "a long enough password")
        _ = try await server.mail(to: "new@example.org")
        try await device.resetPassword(for: "solved@example.org")
        _ = try await server.mail(to: "solved@example.org", number: 2)
        let pending = try await device.requestApproval(for: "solved@example.org")
        #expect((10...99).contains(pending.number))
        #expect(try await server.outboxCount() == 4)
    }

    @Test("a solution used once already: challengeRequired, nothing queued; with the convenience, a fresh one is solved")
    func reusedSolution() async throws {
        let server = try await LiveServer(Self.always)
        let manual = server.device(solvesProofOfWork: false)
        let solution = try await manual.solveChallenge()
        try await manual.resetPassword(for: "once@example.org", challengeSolution: solution)
        #expect(try await server.outboxCount() == 1)
        await #expect(throws: PosternAuthError.challengeRequired(kind: ProofOfWorkChallenge.kind, siteKey: nil)) {
            try await manual.sendSignInLink(to: "once@example.org", challengeSolution: solution)
        }
        #expect(try await server.outboxCount() == 1)
        // The convenience treats a refused solution as none: it solves a new one, once.
        try await server.device().sendSignInLink(to: "once@example.org", challengeSolution: solution)
        #expect(try await server.outboxCount() == 2)
    }

    @Test("phone sign-in: challengeRequired without a solution; the convenience sends the SMS, whose code signs in")
    func phone() async throws {
        let server = try await LiveServer(LiveServer.phoneSignInFlags + Self.always)
        let number = "+4915112345678"
        await #expect(throws: PosternAuthError.challengeRequired(kind: ProofOfWorkChallenge.kind, siteKey: nil)) {
            try await server.device(solvesProofOfWork: false).sendPhoneSignInCode(to: number)
        }
        let device = server.device()
        try await device.sendPhoneSignInCode(to: number)
        #expect(try await device.signIn(phoneNumber: number, code: try await server.smsCode(to: number)).isNewUser)
    }

    @Test("a server without the challenge (--challenge off) needs no solution: sent at the first request")
    func off() async throws {
        let server = try await LiveServer()  // LiveServer's default: --challenge off
        try await server.device(solvesProofOfWork: false).sendSignInLink(to: "plain@example.org")
        #expect(try await server.outboxCount() == 1)
    }
}

/// The convenience's bounds against a stub that always asks: one retry, never a loop; a CAPTCHA
/// is the app's to show.
@Suite("the challenge's retry")
struct ChallengeRetryTests {
    /// Always CHALLENGE_REQUIRED of `kind` for a send; a proof of work (hashlib's vector, number
    /// 1000) for `GET /v1/challenge`.
    static func askingAlways(_ kind: String = "altcha", siteKey: String? = nil) -> StubServer {
        StubServer { request in
            if request.method == "GET", request.path == "/v1/challenge" {
                return .ok(ChallengeBody(
                    kind: "altcha", algorithm: "SHA-256", challenge: ProofOfWorkTests.posternVectors[1].challenge, maxnumber: 250_000,
                    salt: ProofOfWorkTests.posternSalt, signature: ProofOfWorkTests.posternVectors[1].signature))
            }
            return StubServer.Answer(status: 400, body: APIJSON.encode(ErrorBody(error: .init(
                code: "CHALLENGE_REQUIRED", message: "m", challenge: kind, challengeUrl: "/v1/challenge", siteKey: siteKey))))
        }
    }

    @Test("a proof of work refused again after the retry is thrown: send, fetch, send — the second with the solution")
    func retriesOnce() async throws {
        let server = Self.askingAlways()
        await #expect(throws: PosternAuthError.challengeRequired(kind: "altcha", siteKey: nil)) {
            try await server.device().sendSignInLink(to: "ada@example.org")
        }
        let requests = server.requests
        #expect(requests.map(\.path) == ["/v1/email-link/send", "/v1/challenge", "/v1/email-link/send"])
        let first = try requests[0].decode(EmailLinkSendBody.self)
        let second = try requests[2].decode(EmailLinkSendBody.self)
        #expect(first.challengeSolution == nil)
        let solution = try ProofOfWorkTests.fields(of: try #require(second.challengeSolution))
        #expect(solution["number"] as? Int == 1000)
    }

    @Test("a CAPTCHA is thrown at once with its site key: nothing fetched, nothing retried")
    func captchaIsThrown() async throws {
        let server = Self.askingAlways("turnstile", siteKey: "0x4AAA")
        await #expect(throws: PosternAuthError.challengeRequired(kind: "turnstile", siteKey: "0x4AAA")) {
            try await server.device().resetPassword(for: "ada@example.org", challengeSolution: "widget-token")
        }
        #expect(server.requests.map(\.path) == ["/v1/password/reset"])
        #expect(try server.requests[0].decode(PasswordResetBody.self).challengeSolution == "widget-token")
    }
}
