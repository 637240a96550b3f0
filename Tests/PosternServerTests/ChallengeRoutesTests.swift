import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// The challenge over HTTP: `GET /v1/challenge`, `challengeSolution` on every route that sends,
/// CHALLENGE_REQUIRED byte for byte the same for every address, and where the requests run.
@Suite("The challenge over HTTP")
struct ChallengeRoutesTests {
    static let token = "challenge-admin-test-token-0123456789"

    static func harness(
        _ mode: ChallengeMode, http: (any ProviderHTTP)? = nil, configure: @escaping (inout Settings) -> Void = { _ in }
    ) throws -> RouterTests.Harness {
        try RouterTests.harnessWithService(adminToken: token, challengeHTTP: http) {
            $0.challenge.mode = mode
            $0.challenge.difficulty = 1_000
            $0.trustedProxies = ["192.0.2.1/32"]
            $0.phoneSignIn = true
            configure(&$0)
        }
    }

    static func post(_ h: RouterTests.Harness, _ path: String, _ body: [String: Any], from client: String = "198.51.100.1") throws -> HTTPResponse {
        let headers = ["content-type": "application/json", "x-forwarded-for": client]
        let bytes = try JSONSerialization.data(withJSONObject: body)
        return h.router.handle(HTTPRequest(method: "POST", path: path, query: [:], headers: headers, body: Array(bytes), clientIP: "192.0.2.1"))
    }

    /// A challenge from `GET /v1/challenge`, solved.
    static func solution(_ h: RouterTests.Harness) throws -> String {
        let response = h.router.handle(RouterTests.request("GET", "/v1/challenge"))
        #expect(response.status == 200)
        let body = try APIJSON.decode(ChallengeBody.self, from: response.body)
        let challenge = ProofOfWorkChallenge(
            algorithm: try #require(body.algorithm), challenge: try #require(body.challenge), maxnumber: try #require(body.maxnumber),
            salt: try #require(body.salt), signature: try #require(body.signature))
        return try #require(ProofOfWorkSolver.payload(challenge))
    }

    @Test("GET /v1/challenge answers ALTCHA's challenge JSON with kind altcha, and for a CAPTCHA its service and site key")
    func offer() throws {
        let h = try Self.harness(.always)
        let object = RouterTests.json(h.router.handle(RouterTests.request("GET", "/v1/challenge")))
        #expect(Set(object.keys) == ["kind", "algorithm", "challenge", "maxnumber", "salt", "signature"])
        #expect(object["kind"] as? String == "altcha" && object["algorithm"] as? String == "SHA-256" && object["maxnumber"] as? Int == 1_000)
        let captcha = try Self.harness(.always, http: ProviderServerTableForRoutes()) {
            $0.challenge.captcha = .hcaptcha
            $0.challenge.captchaSiteKey = "site-key-9"
        }
        let answer = RouterTests.json(captcha.router.handle(RouterTests.request("GET", "/v1/challenge")))
        #expect(answer as NSDictionary == ["kind": "hcaptcha", "siteKey": "site-key-9"] as NSDictionary)
    }

    @Test("no oracle: with --challenge always, send-link, sign-up, reset and phone sign-in answer CHALLENGE_REQUIRED with the same status, headers and bytes for an address with an account and one without; nothing is queued")
    func sameBytesForEveryAddress() throws {
        let h = try Self.harness(.always)
        #expect(try Self.post(h, "/v1/email-link/send", ["email": "owner@example.org", "challengeSolution": try Self.solution(h)]).status == 202)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try FlowHarnessLink.last(h)))
        let queued = h.store.queuedMail().count
        for (path, field) in [("/v1/email-link/send", "email"), ("/v1/password/sign-up", "email"), ("/v1/password/reset", "email")] {
            var answers: Set<String> = []
            for email in ["owner@example.org", "nobody@example.org"] {
                var body: [String: Any] = [field: email]
                if path.hasSuffix("sign-up") { body["password"] = "a fine password 1" }
                let response = try Self.post(h, path, body)
                #expect(response.status == 400 && RouterTests.errorCode(response) == "CHALLENGE_REQUIRED", "\(path)")
                answers.insert("\(response.headers)|\(String(decoding: response.body, as: UTF8.self))")
            }
            #expect(answers.count == 1, "\(path): \(answers)")
        }
        let sms = try Self.post(h, "/v1/phone/send", ["phoneNumber": "+4915112345678"])
        #expect(sms.status == 400 && RouterTests.errorCode(sms) == "CHALLENGE_REQUIRED")
        #expect(h.store.queuedMail().count == queued)
        let error = try #require(RouterTests.json(try Self.post(h, "/v1/password/reset", ["email": "x@example.org"]))["error"] as? [String: Any])
        #expect(error["challenge"] as? String == "altcha" && error["challengeUrl"] as? String == "/v1/challenge" && error["siteKey"] == nil)
    }

    @Test("attacker: every route that sends takes a solution once; the second use of it, on any route, is refused and queues nothing; the refusal is logged with its reason, never the solution")
    func solutionsAreUsedOnceAcrossRoutes() throws {
        let h = try Self.harness(.always)
        let solution = try Self.solution(h)
        #expect(try Self.post(h, "/v1/password/reset", ["email": "a@example.org", "challengeSolution": solution]).status == 202)
        for (path, body) in [
            ("/v1/email-link/send", ["email": "b@example.org"]), ("/v1/password/sign-up", ["email": "b@example.org", "password": "a fine password 1"]),
            ("/v1/password/reset", ["email": "b@example.org"]), ("/v1/phone/send", ["phoneNumber": "+4915112345678"]),
        ] {
            var withSolution: [String: Any] = body
            withSolution["challengeSolution"] = solution
            let response = try Self.post(h, path, withSolution, from: "198.51.100.\(path.count)")
            #expect(RouterTests.errorCode(response) == "CHALLENGE_REQUIRED", "\(path)")
        }
        #expect(h.store.queuedMail().count == 1)
        let refusals = h.log().filter { $0.contains("challenge solution refused: used") }
        #expect(refusals.count == 4 && refusals.allSatisfy { !$0.contains(solution) })
        let metrics = String(decoding: h.router.handle(RouterTests.request("GET", "/metrics", bearer: Self.token)).body, as: UTF8.self)
        #expect(metrics.contains(#"postern_challenges_total{outcome="solved"} 1"#))
        #expect(metrics.contains(#"postern_challenges_total{outcome="refused"} 4"#))
    }

    @Test("a challengeSolution of the wrong type, or over 4,096 characters, is refused as INVALID_ARGUMENT whatever the mode (schemathesis found the off mode taking a long one); nothing is queued")
    func solutionShape() throws {
        let h = try Self.harness(.always)
        let long = try Self.post(h, "/v1/email-link/send", ["email": "a@example.org", "challengeSolution": String(repeating: "A", count: 4_097)])
        #expect(long.status == 400 && RouterTests.errorCode(long) == "INVALID_ARGUMENT")
        let off = try Self.harness(.off)
        for (path, body) in [("/v1/password/reset", ["email": "a@example.org"]), ("/v1/phone/send", ["phoneNumber": "+4915112345678"])] {
            var withSolution: [String: Any] = body
            withSolution["challengeSolution"] = String(repeating: "0", count: 4_097)
            #expect(RouterTests.errorCode(try Self.post(off, path, withSolution)) == "INVALID_ARGUMENT", "\(path)")
        }
        #expect(off.store.queuedMail().isEmpty)
        let number = try Self.post(h, "/v1/email-link/send", ["email": "a@example.org", "challengeSolution": 7])
        #expect(number.status == 400 && RouterTests.errorCode(number) == "INVALID_ARGUMENT")
        #expect(h.store.queuedMail().isEmpty)
    }

    @Test("with a CAPTCHA the gated routes are not answered from the commit (its check waits on the network); with the proof of work they still are")
    func captchaRunsOnThreadsThatWait() throws {
        let pow = try Self.harness(.always)
        let captcha = try Self.harness(.always, http: ProviderServerTableForRoutes()) {
            $0.challenge.captcha = .turnstile
            $0.challenge.captchaSiteKey = "site-key-1"
        }
        #expect(pow.router.answersFromCommit == pow.service.answersFromCommit)
        #expect(!captcha.router.answersFromCommit)
    }
}

/// A CAPTCHA service that is never asked (the routes' tests above send it no token).
final class ProviderServerTableForRoutes: ProviderHTTP {
    func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse { throw ProviderHTTPError("not served") }
    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    {
        throw ProviderHTTPError("not served")
    }
}
