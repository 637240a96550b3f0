import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The challenge (``ChallengeGate``) as a bot meets it through the flows: no mail without a
/// solution when it is asked for, a solution buys one request, the answer is the same for every
/// address, and what it counts rolls back with a refusal.
@Suite("The challenge on the requests that send mail or SMS, through the flows")
struct FlowChallengeTests {
    static func harness(
        _ mode: ChallengeMode, ipPerHour: Int64 = 0, domainPerHour: Int64 = 0, http: (any ProviderHTTP)? = nil,
        captcha: CaptchaService? = nil, configure: (inout AuthConfiguration) -> Void = { _ in }
    ) throws -> FlowHarness {
        try FlowHarness(challengeHTTP: http) {
            $0.challenge = ChallengeConfiguration(
                mode: mode, captcha: captcha, captchaSiteKey: captcha.map { _ in "site-key-1" }, captchaSecret: captcha.map { _ in "captcha-secret-1" },
                captchaVerifyURL: captcha.map { _ in "https://captcha.test/siteverify" }, difficulty: 1_000, ipPerHour: ipPerHour,
                domainPerHour: domainPerHour)
            configure(&$0)
        }
    }

    /// A solved proof of work from the gate, as a client sends it.
    static func solution(_ h: FlowHarness) throws -> String {
        guard case .proofOfWork(let challenge) = try h.service.challenges.offer() else { throw AuthError.internalError("no proof of work") }
        return try #require(ProofOfWorkSolver.payload(challenge))
    }

    /// Sends a sign-in link to `email` from `ip` with `solution`: nil when queued, else the error.
    static func send(_ h: FlowHarness, _ email: String, ip: String? = "203.0.113.7", solution: String? = nil) -> AuthError? {
        do {
            let pass = try h.service.challenges.check(solution: solution, clientIP: ip)
            try h.service.emailLink.send(EmailLinkRequest(email: email, challengePass: pass))
        } catch {
            return error
        }
        return nil
    }

    /// An account for `email`, made through a solved send-link; its sign-in.
    static func account(_ h: FlowHarness, _ email: String) throws -> LoginDescriptor {
        #expect(send(h, email, solution: try solution(h)) == nil)
        return try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
    }

    static func outcome(_ h: FlowHarness, _ name: String) -> Int? { h.service.challenges.snapshot().first { $0.outcome == name }?.count }

    @Test("attacker (bot run): with --challenge always, 1,000 send-links without a solution queue nothing, each answered CHALLENGE_REQUIRED naming the proof of work alike for an address with an account and one without")
    func alwaysWithoutSolutionSendsNothing() throws {
        let h = try Self.harness(.always)
        _ = try Self.account(h, "ada@example.com")
        let mailBefore = h.store.queuedMail().count
        var answers: Set<AuthError> = []
        for i in 0..<1_000 {
            if let error = Self.send(h, i.isMultiple(of: 2) ? "ada@example.com" : "nobody\(i)@example.com", ip: "198.51.100.\(i % 200)") {
                answers.insert(error)
            }
        }
        #expect(answers == [.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)], "one answer for all 1,000")
        #expect(h.store.queuedMail().count == mailBefore)
        #expect(Self.outcome(h, "asked") == 1_000)
        let error = try #require(answers.first)
        #expect(error.code == "CHALLENGE_REQUIRED" && error.details == ["challenge": "altcha", "challengeUrl": "/v1/challenge"])
    }

    @Test("attacker (bot run): a solution buys one mail; sent again (to another address, from another IP) it is refused and nothing more is queued")
    func aSolutionIsUsedOnce() throws {
        let h = try Self.harness(.always)
        let solution = try Self.solution(h)
        #expect(Self.send(h, "one@example.com", solution: solution) == nil)
        #expect(h.store.queuedMail().count == 1)
        let again = Self.send(h, "two@example.com", ip: "192.0.2.1", solution: solution)
        #expect(again?.code == "CHALLENGE_REQUIRED" && again?.logDetail == "challenge solution refused: used")
        #expect(h.store.queuedMail().count == 1)
        #expect(Self.outcome(h, "solved") == 1 && Self.outcome(h, "refused") == 1)
        // A fresh one works.
        #expect(Self.send(h, "two@example.com", solution: try Self.solution(h)) == nil)
        #expect(h.store.queuedMail().count == 2)
    }

    @Test("a solution refused before the write (wrong, expired) queues nothing and says only to solve a new one; the operator's log gets the reason")
    func wrongAndExpiredSolutions() throws {
        let h = try Self.harness(.always)
        guard case .proofOfWork(let challenge) = try h.service.challenges.offer() else { Issue.record("no proof of work"); return }
        let number = try #require(ProofOfWorkSolver.solve(challenge))
        let wrong = Self.send(h, "a@example.com", solution: ProofOfWorkSolver.payload(challenge, number: (number + 1) % 1_001))
        #expect(wrong?.code == "CHALLENGE_REQUIRED" && wrong?.logDetail == "challenge solution refused: wrong")
        #expect(wrong?.message.contains("not accepted") == true)
        h.clock.advance(by: 301)
        let expired = Self.send(h, "a@example.com", solution: ProofOfWorkSolver.payload(challenge))
        #expect(expired?.logDetail == "challenge solution refused: expired")
        #expect(h.store.queuedMail().isEmpty)
    }

    @Test("a request refused after the gate (the address's own limit) does not spend its solution: the same solution works once the limit allows")
    func refusedLaterKeepsTheSolution() throws {
        let h = try Self.harness(.always) { $0.mailPerHour = 1 }
        #expect(Self.send(h, "a@example.com", solution: try Self.solution(h)) == nil)
        let solution = try Self.solution(h)
        // The address's hourly mail is spent: answered before the gate, the solution untouched.
        #expect(Self.send(h, "a@example.com", solution: solution)?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(Self.send(h, "b@example.com", solution: solution) == nil)
        #expect(h.store.queuedMail().count == 2)
    }

    @Test("a cap's refusal after the gate rolls the solution's use back too: the same solution is good for the retry")
    func capRefusalRollsBackTheUse() throws {
        let h = try Self.harness(.always) { $0.mailCaps = MailCapConfiguration(domainPerHour: 1) }
        #expect(Self.send(h, "a@example.org", solution: try Self.solution(h)) == nil)
        let solution = try Self.solution(h)
        #expect(Self.send(h, "b@example.org", solution: solution)?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(Self.send(h, "b@example.net", solution: solution) == nil, "the use was rolled back with the cap's refusal")
    }

    @Test("when-limited: an IP's first 3 requests an hour pass without a solution, its 4th is asked; another IP is not; a solution still passes; the next hour opens it again")
    func whenLimitedByIP() throws {
        let h = try Self.harness(.whenLimited, ipPerHour: 3)
        h.clock.advance(by: 100)
        for i in 0..<3 { #expect(Self.send(h, "u\(i)@example.com") == nil) }
        #expect(Self.send(h, "u3@example.com")?.code == "CHALLENGE_REQUIRED")
        #expect(Self.send(h, "u3@example.com", ip: "203.0.113.8") == nil)
        #expect(Self.send(h, "u3@example.com", solution: try Self.solution(h)) == nil)
        #expect(Self.send(h, "u4@example.com")?.code == "CHALLENGE_REQUIRED", "a solution buys one request, it does not reset the IP")
        h.clock.advance(by: 3_500)
        #expect(Self.send(h, "u4@example.com") == nil)
        #expect(h.store.queuedMail().count == 6)
    }

    @Test("attacker: when-limited per recipient domain holds against 200 client IPs: 1,000 addresses at one domain, 5 free, then every request there asks (gmail and googlemail as one); other domains stay free")
    func whenLimitedByDomain() throws {
        let h = try Self.harness(.whenLimited, domainPerHour: 5)
        var asked = 0
        for i in 0..<1_000 {
            let domain = i.isMultiple(of: 2) ? "gmail.com" : "GoogleMail.com"
            if Self.send(h, "user\(i)@\(domain)", ip: "198.51.100.\(i % 200)")?.code == "CHALLENGE_REQUIRED" { asked += 1 }
        }
        #expect(asked == 995)
        #expect(h.store.queuedMail().count == 5)
        #expect(Self.send(h, "someone@example.org", ip: "198.51.100.1") == nil)
    }

    @Test("the signed-in user's own mail (verify the address) is not gated; off turns the gate off and ignores a solution")
    func notGated() throws {
        let always = try Self.harness(.always)
        let login = try Self.account(always, "me@example.com")
        let idToken = login.session.idToken
        try always.service.addresses.requestChange(idToken: idToken, newEmail: "new@example.com", continueURL: nil)
        #expect(always.store.queuedMail().count == 2)
        let off = try Self.harness(.off)
        #expect(Self.send(off, "a@example.com") == nil)
        #expect(Self.send(off, "b@example.com", solution: "garbage") == nil)
        #expect(off.service.challenges.snapshot().allSatisfy { $0.count == 0 })
    }

    @Test("every public path that sends is gated: sign-up, reset, phone sign-in (an SMS), and their solution is used once")
    func everyPathIsGated() throws {
        let h = try Self.harness(.always) { $0.phoneSignIn = true; $0.sms.phoneSignIn = true }
        let pass = { (solution: String?) throws(AuthError) -> ChallengePass in
            try h.service.challenges.check(solution: solution, clientIP: "203.0.113.9")
        }
        #expect(throws: AuthError.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)) {
            try h.service.passwords.signUp(email: "s@example.com", password: "a fine password 1", idToken: nil, continueURL: nil, locale: nil,
                                           challengePass: try pass(nil))
        }
        #expect(throws: AuthError.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)) {
            try h.service.passwords.requestReset(email: "s@example.com", continueURL: nil, locale: nil, challengePass: try pass(nil))
        }
        #expect(throws: AuthError.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)) {
            try h.service.phoneSignIn.send(phoneNumber: "+4915112345678", locale: nil, idToken: nil, clientIP: "203.0.113.9",
                                           challengePass: try pass(nil))
        }
        #expect(h.store.queuedMail().isEmpty)
        let solution = try Self.solution(h)
        try h.service.passwords.signUp(email: "s@example.com", password: "a fine password 1", idToken: nil, continueURL: nil, locale: nil,
                                       challengePass: try pass(solution))
        #expect(h.store.queuedMail().count == 1)
        #expect(throws: AuthError.self) {
            try h.service.passwords.requestReset(email: "s@example.com", continueURL: nil, locale: nil, challengePass: try pass(solution))
        }
        let sms = try Self.solution(h)
        try h.service.phoneSignIn.send(phoneNumber: "+4915112345678", locale: nil, idToken: nil, clientIP: "203.0.113.9",
                                       challengePass: try pass(sms))
        #expect(throws: AuthError.self) {
            try h.service.phoneSignIn.send(phoneNumber: "+4915112345679", locale: nil, idToken: nil, clientIP: "203.0.113.9",
                                           challengePass: try pass(sms))
        }
    }

    @Test("CAPTCHA: the token goes to siteverify with the secret and the client IP; success sends, a no queues nothing, a token used twice is refused, a service that cannot be reached is 503 and its answer without a verdict too")
    func captcha() throws {
        let table = ProviderServerTable()
        let url = "https://captcha.test/siteverify"
        let h = try Self.harness(.always, http: table, captcha: .turnstile)
        #expect(Self.send(h, "a@example.com") == .challengeRequired(kind: "turnstile", siteKey: "site-key-1", refusal: nil))
        #expect(table.requests.isEmpty, "no token: the service is not asked")
        guard case .captcha(.turnstile, "site-key-1") = try h.service.challenges.offer() else { Issue.record("no CAPTCHA offer"); return }
        try table.serve(url, json: ["success": true, "hostname": "auth.example.com"])
        #expect(Self.send(h, "a@example.com", solution: "token-1") == nil)
        #expect(table.requests.last == .init(method: "POST", url: url, fields: ["secret=captcha-secret-1", "response=token-1", "remoteip=203.0.113.7"], basic: nil))
        #expect(Self.send(h, "b@example.com", solution: "token-1")?.logDetail == "challenge solution refused: used")
        try table.serve(url, json: ["success": false, "error-codes": ["invalid-input-response"]])
        #expect(Self.send(h, "b@example.com", solution: "token-2")?.logDetail == "challenge solution refused: captchaRefused")
        #expect(Self.send(h, "b@example.com", solution: "bad token with spaces")?.logDetail == "challenge solution refused: malformed")
        table.fail(url)
        let down = Self.send(h, "b@example.com", solution: "token-3")
        #expect(down?.code == "UNAVAILABLE" && down?.logDetail?.contains("captcha-secret-1") == false)
        try table.serve(url, json: ["nothing": true], status: 500)
        #expect(Self.send(h, "b@example.com", solution: "token-4")?.code == "UNAVAILABLE")
        #expect(h.store.queuedMail().count == 1)
        #expect(h.service.challenges.verifiesOverNetwork)
    }

    @Test("CAPTCHA: a token solved on another host than --captcha-hostnames, or a reCAPTCHA v3 score below the minimum, is refused and spends nothing; answers without a score are not judged by it")
    func captchaHostnameAndScore() throws {
        let table = ProviderServerTable()
        let url = "https://captcha.test/siteverify"
        let h = try Self.harness(.always, http: table, captcha: .recaptcha) {
            $0.challenge.captchaHostnames = ["auth.example.com"]
            $0.challenge.captchaMinimumScore = 0.7
        }
        try table.serve(url, json: ["success": true, "hostname": "evil.example.net", "score": 0.9])
        #expect(Self.send(h, "a@example.com", solution: "token-1")?.logDetail == "challenge solution refused: captchaHostname")
        try table.serve(url, json: ["success": true, "score": 0.9])
        #expect(Self.send(h, "a@example.com", solution: "token-2")?.logDetail == "challenge solution refused: captchaHostname", "no hostname at all")
        try table.serve(url, json: ["success": true, "hostname": "AUTH.example.com", "score": 0.3])
        #expect(Self.send(h, "a@example.com", solution: "token-3")?.logDetail == "challenge solution refused: captchaScore")
        #expect(h.store.queuedMail().isEmpty)
        try table.serve(url, json: ["success": true, "hostname": "AUTH.example.com", "score": 0.7])
        #expect(Self.send(h, "a@example.com", solution: "token-4") == nil)
        try table.serve(url, json: ["success": true, "hostname": "auth.example.com"])
        #expect(Self.send(h, "b@example.com", solution: "token-5") == nil, "reCAPTCHA v2: no score")
        #expect(h.store.queuedMail().count == 2)
    }

    @Test("--captcha-hostnames takes a lowercased host list and --captcha-minimum-score 0.0 to 1.0; anything else is refused naming the setting")
    func captchaCheckSettings() throws {
        let captcha = ["captcha": "recaptcha", "captcha-site-key": "site-key-1", "captcha-secret-file": "/etc/postern/captcha.secret"]
        let s = try Settings.resolve(
            flags: captcha.merging(["captcha-hostnames": "Auth.Example.com, www.example.com", "captcha-minimum-score": "0.8"]) { $1 },
            environment: [:], file: [:])
        #expect(s.challenge.captchaHostnames == ["auth.example.com", "www.example.com"] && s.challenge.captchaMinimumScore == 0.8)
        #expect(try Settings.resolve(flags: [:], environment: [:], file: [:]).challenge.captchaMinimumScore == 0.5)
        for (flag, value) in [("captcha-hostnames", "https://auth.example.com"), ("captcha-hostnames", ",,"), ("captcha-minimum-score", "1.5"),
                              ("captcha-minimum-score", "high")] {
            let error = #expect(throws: SettingsError.self) { try Settings.resolve(flags: [flag: value], environment: [:], file: [:]) }
            #expect(error?.message.contains(flag) == true)
        }
        let alone = #expect(throws: SettingsError.self) { try Settings.resolve(flags: ["captcha-hostnames": "auth.example.com"], environment: [:], file: [:]) }
        #expect(alone?.message.contains("need --captcha") == true)
    }

    @Test("a CAPTCHA without its secret or a client does not start")
    func captchaNeedsItsParts() throws {
        #expect(throws: AuthError.self) { _ = try Self.harness(.always, http: nil, captcha: .hcaptcha) }
    }
}

/// The phone claims' SMS: a caller one anonymous session away pays the challenge as a signed-out
/// caller of phone sign-in does; an identified owner does not.
@Suite("The challenge on the phone claims' SMS")
struct FlowChallengePhoneClaimTests {
    @Test("attacker: with --phone-sign-in, an anonymous session cannot text a number through POST /v1/me/phones or /v1/phones/claims without a solution; an account with a proved address can")
    func anonymousClaimsAreGated() throws {
        let h = try FlowChallengeTests.harness(.always) { $0.phoneSignIn = true; $0.sms.phoneSignIn = true }
        let anonymous = try h.service.sessions.signInAnonymously()
        let none = try h.service.challenges.check(solution: nil, clientIP: "203.0.113.5")
        #expect(throws: AuthError.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)) {
            _ = try h.service.phoneOwner.add(idToken: anonymous.idToken, phoneNumber: "+4915112345678", locale: nil, clientIP: "203.0.113.5",
                                             challengePass: none)
        }
        #expect(throws: AuthError.challengeRequired(kind: "altcha", siteKey: nil, refusal: nil)) {
            _ = try h.service.phoneHolder.start(idToken: anonymous.idToken, phoneNumber: "+4915112345678", email: "x@example.com", locale: nil,
                                                clientIP: "203.0.113.5", challengePass: none)
        }
        #expect(h.store.snapshot().sms.isEmpty)
        let solved = try h.service.challenges.check(solution: try FlowChallengeTests.solution(h), clientIP: "203.0.113.5")
        _ = try h.service.phoneOwner.add(idToken: anonymous.idToken, phoneNumber: "+4915112345678", locale: nil, clientIP: "203.0.113.5",
                                         challengePass: solved)
        #expect(h.store.snapshot().sms.count == 1)
        // An identified owner (a proved address) is not asked.
        let owner = try FlowChallengeTests.account(h, "owner@example.com")
        _ = try h.service.phoneOwner.add(idToken: owner.session.idToken, phoneNumber: "+4915112345679", locale: nil, clientIP: "203.0.113.5",
                                         challengePass: none)
        #expect(h.store.snapshot().sms.count == 2)
    }
}
