import Foundation
import PosternCore
import PosternCrypto
import Testing

@Suite("Email-link sign-in")
struct FlowEmailLinkTests {
    @Test("send records the request and queues an intent; the mail holds a link and a 6-digit code")
    func sendQueuesIntent() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "New@Example.com", continueURL: "https://app.example.com/welcome"))
        let queued = h.store.queuedMail()
        #expect(queued.count == 1)
        guard case .signIn = queued.first?.intent else { Issue.record("not a sign-in intent"); return }
        let mail = try #require(try h.lastMail())
        guard case .signIn(let link, let code, _) = mail.message.content else { Issue.record("not a sign-in mail"); return }
        #expect(link.hasPrefix("https://auth.example.com/action?mode=signIn&oobCode="))
        #expect(link.contains("continueUrl=https%3A%2F%2Fapp.example.com%2Fwelcome"))
        #expect(!link.lowercased().contains("new%40example"), "the link carries no address")
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        #expect(mail.message.recipient.address == "New@example.com")
    }

    @Test("a new address: completing creates the account, isNewUser, verified; replay is refused")
    func createAndReplay() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: "Click here: <\(link)>"))
        #expect(login.isNewUser)
        #expect(login.migration == nil)
        #expect(login.email == "a@example.com")
        #expect(login.session.isAnonymous == false)
        let account = try #require(try h.account(login.uid))
        #expect(account.emailVerified)
        #expect(account.providers == [.emailLink])
        expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        // A second sign-in to the same address is not new.
        #expect(try h.signIn("A@EXAMPLE.COM").isNewUser == false)
    }

    @Test("an expired link says so")
    func expired() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        h.clock.advance(by: 601)
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
    }

    @Test("a link for another action or another site is refused with a reason")
    func wrongLinks() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        let foreign = link.replacingOccurrences(of: "auth.example.com", with: "evil.example.net")
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: foreign)) }
        let otherMode = link.replacingOccurrences(of: "mode=signIn", with: "mode=resetPassword")
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: otherMode)) }
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.emailLink.complete(EmailLinkCompletion()) }
        expectAuthError("INVALID_EMAIL") { try h.service.emailLink.send(EmailLinkRequest(email: "a@b@c")) }
        expectAuthError("INVALID_CONTINUE_URI") {
            try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", continueURL: "https://evil.example.net/"))
        }
    }

    @Test("the 6-digit code completes with the address; 5 wrong tries kill it")
    func sixDigits() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        guard case .signIn(_, let digits, _) = try #require(try h.lastMail()).message.content else { return }
        let wrong = digits == "000000" ? "111111" : "000000"
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.emailLink.complete(EmailLinkCompletion(code: digits)) }
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong, email: "a@example.com"))
        }
        let login = try h.service.emailLink.complete(EmailLinkCompletion(code: digits, email: "a@example.com"))
        #expect(login.isNewUser)

        try h.service.emailLink.send(EmailLinkRequest(email: "b@example.com"))
        guard case .signIn(_, let second, _) = try #require(try h.lastMail()).message.content else { return }
        let bad = second == "000000" ? "111111" : "000000"
        for _ in 0..<5 {
            expectAuthError("INVALID_OOB_CODE") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(code: bad, email: "b@example.com"))
            }
        }
        // Five wrong guesses also lock the address for a while; past the lock the code is dead.
        h.clock.advance(by: 31)
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: second, email: "b@example.com"))
        }
    }

    @Test("wrong codes are also counted per address across codes")
    func perAddressFailureLimit() throws {
        let h = try FlowHarness { $0.guessBudget = GuessBudget(free: 3, base: 30, cap: 3600, forgetAfter: 86_400) }
        for _ in 0..<3 {
            expectAuthError("INVALID_OOB_CODE") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(code: "123456", email: "c@example.com"))
            }
        }
        let error = expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: "123456", email: "c@example.com"))
        }
        #expect(error?.kind == .rateLimited)
        #expect(error?.details["retryAfter"] == "30")
    }

    @Test("PKCE: only the verifier completes the link; a typed address does not; the 6-digit code does")
    func pkce() throws {
        let h = try FlowHarness()
        let verifier = "a-long-random-verifier-0123456789abcdefghijklmnop"
        let challenge = Base64URL.encode(SHA256.hash(verifier))
        func request() throws -> String {
            try h.service.emailLink.send(EmailLinkRequest(email: "p@example.com", codeChallenge: challenge))
            return try h.lastLink()
        }
        let first = try request()
        expectAuthError("INVALID_CODE_VERIFIER") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: first)) }
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: first, codeVerifier: "wrong-verifier"))
        }
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: first, email: "P@example.com"))
        }
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: first, codeVerifier: verifier))
        let second = try request()
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second, email: "P@example.com"))
        }
        guard case .signIn(_, let digits, _) = try #require(try h.lastMail()).message.content else {
            Issue.record("not a sign-in mail")
            return
        }
        _ = try h.service.emailLink.complete(EmailLinkCompletion(code: digits, email: "p@example.com"))
        expectAuthError("INVALID_ARGUMENT") {
            try h.service.emailLink.send(EmailLinkRequest(email: "p@example.com", codeChallenge: "short"))
        }
    }

    @Test("a typed address that differs from the link's is refused even without PKCE")
    func emailMismatch() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        expectAuthError("EMAIL_MISMATCH") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, email: "b@example.com"))
        }
    }

    @Test("per-address limits answer 429 alike for existing and unknown addresses")
    func addressLimits() throws {
        let h = try FlowHarness {
            $0.mailInterval = 60
            $0.mailPerHour = 5
        }
        try h.signIn("existing@example.com")
        h.clock.advance(by: 120)
        for address in ["existing@example.com", "unknown@example.com"] {
            try h.service.emailLink.send(EmailLinkRequest(email: address))
            let error = expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
                try h.service.emailLink.send(EmailLinkRequest(email: address))
            }
            #expect(error?.details["retryAfter"] == "60")
        }
        h.clock.advance(by: 60)
        try h.service.emailLink.send(EmailLinkRequest(email: "unknown@example.com"))
    }

    @Test("request ids are 16 bytes: the time in milliseconds, then 80 random bits")
    func requestIDsAreTimePrefixed() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        try h.service.emailLink.send(EmailLinkRequest(email: "b@example.com"))
        h.clock.advance(by: 1.5)
        try h.service.emailLink.send(EmailLinkRequest(email: "c@example.com"))
        let ids = h.store.queuedMail().compactMap { queued -> [UInt8]? in
            guard case .signIn(let id) = queued.intent else { return nil }
            return Base64URL.decode(id)
        }
        #expect(ids.count == 3)
        #expect(ids.allSatisfy { $0.count == 16 })
        func milliseconds(_ id: [UInt8]) -> UInt64 { id.prefix(6).reduce(0) { $0 << 8 | UInt64($1) } }
        let start = UInt64(h.clock.now().timeIntervalSince1970 * 1000) - 1500
        #expect(ids.map(milliseconds) == [start, start, start + 1500])
        #expect(ids[0].suffix(10) != ids[1].suffix(10))
        #expect(Set(ids.map { $0.suffix(10) }).count == 3)
    }

    @Test("rate buckets are keyed hashes: no address, no unkeyed SHA-256, different under another key ring")
    func rateBucketsAreKeyed() throws {
        let first = try FlowHarness { $0.mailInterval = 60 }
        let second = try FlowHarness { $0.mailInterval = 60 }
        for h in [first, second] { try h.service.emailLink.send(EmailLinkRequest(email: "Jane@Example.com")) }
        let bucketsA = Array(first.store.snapshot().rateEvents.keys)
        let bucketsB = Array(second.store.snapshot().rateEvents.keys)
        #expect(bucketsA.count == 1 && bucketsB.count == 1)
        #expect(bucketsA != bucketsB)
        let unkeyed = Array(SHA256.hash("postern-rate|sign-in|jane@example.com").prefix(16))
        #expect(!bucketsA.contains(unkeyed))
        #expect(!bucketsA.contains { String(decoding: $0, as: UTF8.self).contains("jane") })
        // The same ring finds the same bucket: the limit holds.
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { try first.service.emailLink.send(EmailLinkRequest(email: "jane@example.com")) }
    }
}
