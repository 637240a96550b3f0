import Foundation
import PosternCore
import PosternCrypto
import Testing

/// The attack sequences of the security review, each as it was run against the flows, ending in
/// the refusal that closes the hole. Over the in-memory store; `Tests/integration/attacks.sh` runs
/// the same sequences over HTTP against a real daemon.
@Suite("Attack sequences")
struct FlowAttackTests {
    func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    @Test("guess budget: free failures, then doubling locks up to the cap; a lock is not extended by guessing into it")
    func budgetArithmetic() {
        let budget = GuessBudget(free: 3, base: 30, cap: 600, forgetAfter: 3600)
        var record: GuessRecord?
        for _ in 0..<3 {
            #expect(budget.retryAfter(record, now: 1000) == nil)
            record = budget.failing(record, now: 1000)
        }
        #expect(budget.retryAfter(record, now: 1000) == 30)
        #expect(budget.retryAfter(record, now: 1030) == nil)
        record = budget.failing(record, now: 1030)
        #expect(budget.retryAfter(record, now: 1030) == 60)
        for n in Int64(5)...60 { #expect(budget.lockSeconds(failures: n) <= 600) }
        #expect(budget.lockSeconds(failures: 1_000_000) == 600)
        #expect(budget.lockSeconds(failures: Int64.max) == 600)
        // Forgotten after an hour without failures.
        #expect(budget.current(record, now: 1030 + 3600) == nil)
        #expect(budget.failing(record, now: 1030 + 3600).failures == 1)
    }

    @Test("point 1: lock the address, ask for a fresh code, guess on: the correct code is refused until the lock ends")
    func lockThenGuess() throws {
        let h = try FlowHarness()
        let victim = "victim@example.com"
        try h.signIn(victim)
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        let first = try h.lastCode()
        for _ in 0..<5 {
            expectAuthError("INVALID_OOB_CODE") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong(first), email: victim))
            }
        }
        // A fresh code (the public send) resets nothing.
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        let fresh = try h.lastCode()
        for _ in 0..<300 {
            expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong(fresh), email: victim))
            }
        }
        let refused = expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: fresh, email: victim))
        }
        #expect(refused?.details["retryAfter"] == "30", "the lock was not extended by the guesses into it")
        // The link keeps working (128 bits), and it proves the mailbox: the budget is cleared.
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        _ = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: victim))
    }

    @Test("point 1: after the lock, one guess at a time with doubling waits; a wrong guess burns every open code")
    func backoffAndEveryOpenCode() throws {
        let h = try FlowHarness()
        let victim = "v2@example.com"
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        let older = try h.lastCode()
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        let newer = try h.lastCode()
        let bad = ["000000", "111111", "222222"].first { $0 != older && $0 != newer } ?? "333333"
        for _ in 0..<5 {
            expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(code: bad, email: victim)) }
        }
        // Five wrong guesses killed both codes, not only the newest.
        h.clock.advance(by: 31)
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(code: older, email: victim)) }
        h.clock.advance(by: 61)
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(code: newer, email: victim)) }
        let wait = expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: newer, email: victim))
        }
        #expect(wait?.details["retryAfter"] == "120")
    }

    @Test("point 1: an unknown address locks exactly like a known one (no oracle)")
    func unknownAddressesLockAlike() throws {
        let h = try FlowHarness()
        try h.signIn("known@example.com")
        var answers: [[String]] = []
        for address in ["known@example.com", "unknown@example.com"] {
            var codes: [String] = []
            for _ in 0..<7 {
                do throws(AuthError) {
                    _ = try h.service.emailLink.complete(EmailLinkCompletion(code: "123456", email: address))
                } catch {
                    codes.append("\(error.code) \(error.details)")
                }
            }
            answers.append(codes)
        }
        #expect(answers[0] == answers[1])
        #expect(answers[0].last?.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == true)
    }

    @Test("point 6: wrong passwords lock the address; then the right one is refused too; unknown addresses alike")
    func passwordBudget() throws {
        let h = try FlowHarness()
        try h.signUp("owner@example.com", password: "the right password")
        for address in ["owner@example.com", "nobody@example.com"] {
            for _ in 0..<5 {
                expectAuthError("INVALID_LOGIN_CREDENTIALS") {
                    _ = try h.service.passwords.signIn(email: address, password: "a wrong guess", idToken: nil, allowMigration: false)
                }
            }
            for _ in 0..<55 {
                expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
                    _ = try h.service.passwords.signIn(email: address, password: "a wrong guess", idToken: nil, allowMigration: false)
                }
            }
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.passwords.signIn(email: "owner@example.com", password: "the right password", idToken: nil, allowMigration: false)
        }
        h.clock.advance(by: 30)
        _ = try h.service.passwords.signIn(email: "owner@example.com", password: "the right password", idToken: nil, allowMigration: false)
        // The right password gave the budget back: a typo later costs nothing.
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "owner@example.com", password: "a typo", idToken: nil, allowMigration: false)
        }
        _ = try h.service.passwords.signIn(email: "owner@example.com", password: "the right password", idToken: nil, allowMigration: false)
    }

    @Test("point 6: a reset (the mailbox proved) ends a lock the attacker caused")
    func resetClearsThePasswordLock() throws {
        let h = try FlowHarness()
        try h.signUp("owner@example.com", password: "the right password")
        for _ in 0..<6 {
            _ = try? h.service.passwords.signIn(email: "owner@example.com", password: "guess", idToken: nil, allowMigration: false)
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.passwords.signIn(email: "owner@example.com", password: "the right password", idToken: nil, allowMigration: false)
        }
        try h.service.passwords.requestReset(email: "owner@example.com", continueURL: nil, locale: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "a new password")
        _ = try h.service.passwords.signIn(email: "owner@example.com", password: "a new password", idToken: nil, allowMigration: false)
    }

    @Test("point 2: a link asked for with the attacker's anonymous session, completed by the victim's 6-digit code, never upgrades the attacker")
    func sendTimeSessionDoesNotBind() throws {
        let h = try FlowHarness()
        let attacker = try h.service.sessions.signInAnonymously()
        try h.service.emailLink.send(EmailLinkRequest(email: "victim@example.com", idToken: attacker.idToken))
        let login = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: "victim@example.com"))
        #expect(login.uid != attacker.uid)
        #expect(login.isNewUser)
        #expect(try h.account(attacker.uid)?.isAnonymous == true)
        #expect(try h.account(login.uid)?.email?.address == "victim@example.com")
        // The attacker's refresh token still holds only the anonymous account.
        let refreshed = try h.service.sessions.refresh(attacker.refreshToken)
        #expect(refreshed.isAnonymous && refreshed.uid == attacker.uid && refreshed.email == nil)

        // By link without a session: the same.
        let second = try h.service.sessions.signInAnonymously()
        try h.service.emailLink.send(EmailLinkRequest(email: "victim2@example.com", idToken: second.idToken))
        let byLink = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        #expect(byLink.uid != second.uid)
        #expect(try h.account(second.uid)?.isAnonymous == true)
    }

    @Test("point 2: the session that asked still binds when it comes back, or with the PKCE verifier")
    func sendTimeSessionBindsWhenItReturns() throws {
        let h = try FlowHarness()
        let anonymous = try h.service.sessions.signInAnonymously()
        try h.service.emailLink.send(EmailLinkRequest(email: "me@example.com", idToken: anonymous.idToken))
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: anonymous.idToken))
        #expect(login.uid == anonymous.uid)

        let other = try h.service.sessions.signInAnonymously()
        let verifier = "verifier-of-the-asking-device-0123456789abcdef"
        try h.service.emailLink.send(EmailLinkRequest(
            email: "me2@example.com", codeChallenge: Base64URL.encode(SHA256.hash(verifier)), idToken: other.idToken))
        let byVerifier = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: "me2@example.com", codeVerifier: verifier))
        #expect(byVerifier.uid == other.uid)
    }

    @Test("point 3: the attacker's sign-up password does not apply when the victim confirms")
    func signUpPasswordNeedsTheDevice() throws {
        let h = try FlowHarness()
        let challenge = Base64URL.encode(SHA256.hash("the attacker's verifier, never sent to the victim"))
        try h.service.passwords.signUp(
            email: "victim@example.com", password: "attacker's password", idToken: nil, continueURL: nil, locale: nil,
            codeChallenge: challenge)
        // The victim clicks "Confirm and create my account" (no verifier: not the attacker's device).
        let link = try h.lastLink()
        expectAuthError("INVALID_CODE_VERIFIER") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        // Without a challenge at sign-up, the click creates the account — without the password.
        try h.service.passwords.signUp(email: "victim2@example.com", password: "attacker's password", idToken: nil, continueURL: nil, locale: nil)
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        #expect(login.isNewUser && login.needsPassword)
        #expect(try h.account(login.uid)?.passwordHash == nil)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "victim2@example.com", password: "attacker's password", idToken: nil, allowMigration: false)
        }
    }

    @Test("point 3: an anonymous session given at sign-up is upgraded only when it comes back")
    func signUpSessionNeedsToReturn() throws {
        let h = try FlowHarness()
        let attacker = try h.service.sessions.signInAnonymously()
        try h.service.passwords.signUp(email: "victim@example.com", password: "attacker's password", idToken: attacker.idToken, continueURL: nil, locale: nil)
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        #expect(login.uid != attacker.uid)
        #expect(login.needsPassword)
        #expect(try h.account(attacker.uid)?.isAnonymous == true)
    }

    @Test("point 5: a PKCE link's inspect hides the address, its page shows no code, and it completes only with the verifier")
    func pkceMeansPKCE() throws {
        let h = try FlowHarness()
        let verifier = "pkce-verifier-0123456789abcdefghijklmnopqrstuv"
        try h.service.emailLink.send(EmailLinkRequest(email: "p@example.com", codeChallenge: Base64URL.encode(SHA256.hash(verifier))))
        let link = try h.lastLink()
        let info = try h.service.addresses.inspect(link: link, oobCode: nil)
        #expect(info.email == nil && info.mode == .signIn)
        guard case .link(let parsed) = try h.service.ledger.readPasted(link) else {
            Issue.record("not a link")
            return
        }
        #expect(h.service.ledger.sixDigitCode(forSignInCode: parsed.oobCode) == nil)
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, email: "p@example.com"))
        }
        expectAuthError("INVALID_CODE_VERIFIER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(oobCode: parsed.oobCode, email: "p@example.com"))
        }
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, codeVerifier: verifier))

        // Without a challenge the page keeps showing the code and inspect the address.
        try h.service.emailLink.send(EmailLinkRequest(email: "q@example.com"))
        let plain = try h.lastLink()
        #expect(try h.service.addresses.inspect(link: plain, oobCode: nil).email == "q@example.com")
        guard case .link(let plainParsed) = try h.service.ledger.readPasted(plain) else { return }
        #expect(h.service.ledger.sixDigitCode(forSignInCode: plainParsed.oobCode) != nil)
    }

    @Test("point 4: the code counters move the same for a reset of a known and of an unknown address")
    func metricsDoNotTell() throws {
        let h = try FlowHarness()
        try h.signIn("known@example.com")
        func delta(_ address: String) throws -> [String: Int] {
            let before = Dictionary(h.service.metrics.snapshot().map { ("\($0.event)|\($0.label)", $0.count) }) { a, _ in a }
            try h.service.passwords.requestReset(email: address, continueURL: nil, locale: nil)
            _ = try h.lastMail()
            let after = h.service.metrics.snapshot()
            var moved: [String: Int] = [:]
            for entry in after where entry.count != before["\(entry.event)|\(entry.label)"] ?? 0 {
                moved["\(entry.event)|\(entry.label)"] = entry.count - (before["\(entry.event)|\(entry.label)"] ?? 0)
            }
            return moved
        }
        let known = try delta("known@example.com")
        let unknown = try delta("unknown@example.com")
        #expect(known == unknown)
        #expect(known == ["requested|resetPassword": 1])
    }

    @Test("point 10: two concurrent refreshes of one token get the same successor; a replay after the grace revokes the family")
    func refreshReuseGrace() throws {
        let h = try FlowHarness()
        let login = try h.signIn("tabs@example.com")
        let first = try h.service.sessions.refresh(login.session.refreshToken)
        let second = try h.service.sessions.refresh(login.session.refreshToken)
        #expect(first.refreshToken == second.refreshToken)
        let third = try h.service.sessions.refresh(first.refreshToken)
        #expect(third.refreshToken != first.refreshToken)
        // The successor has been used: the old token is now a replay, grace or not.
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(third.refreshToken) }

        let again = try h.signIn("tabs@example.com")
        _ = try h.service.sessions.refresh(again.session.refreshToken)
        h.clock.advance(by: 31)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(again.session.refreshToken) }
    }

    @Test("point 10: a password reset ends the address's open sign-in links and codes")
    func resetEndsSignInLinks() throws {
        let h = try FlowHarness()
        try h.signIn("owner@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: "owner@example.com"))
        let openLink = try h.lastLink()
        let openCode = try h.lastCode()
        try h.service.passwords.requestReset(email: "owner@example.com", continueURL: nil, locale: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "a new password")
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: openLink)) }
        expectAuthError("INVALID_OOB_CODE") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: openCode, email: "owner@example.com"))
        }
    }

    @Test("every flow that queues mail rings the doorbell after its commit, the recovery mail of a linked address included")
    func doorbellRingsForEveryQueuedMail() throws {
        let h = try FlowHarness()
        final class Rings: @unchecked Sendable {
            // Written by the doorbell on this thread only (the in-memory store rings on the writer).
            var count = 0
        }
        let rings = Rings()
        h.store.mailDoorbell.listen { rings.count += 1 }
        let first = try h.signIn("old@example.com")
        #expect(rings.count == 1)
        // A signed-in account signs in with a new address: the address is linked, and the old
        // one gets a recoverEmail mail (this path used to wait for the next poll).
        try h.service.emailLink.send(EmailLinkRequest(email: "new@example.com", idToken: first.session.idToken))
        let before = rings.count
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: first.session.idToken))
        guard case .recoverEmail = h.store.queuedMail().last?.intent else {
            Issue.record("a recoverEmail mail is queued")
            return
        }
        #expect(rings.count == before + 1)
    }

    @Test("attack: quoted and escaped spellings of one mailbox share its mail limit, its mail and its account")
    func quotedSpellingsAreOneAddress() throws {
        let h = try FlowHarness { $0.mailPerHour = 2 }
        let owner = try h.signIn("victim@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: #""victim"@example.com"#))
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            try h.service.emailLink.send(EmailLinkRequest(email: #""vic\tim"@example.com"#))
        }
        #expect(Set(h.store.queuedMail().map(\.recipient.address)) == ["victim@example.com"])
        // The quoted spelling signs in to the same account, never a second one.
        let again = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        #expect(again.uid == owner.uid && again.isNewUser == false)
    }

    @Test("point 10: an address no mail can carry is refused at intake, and nothing is queued")
    func unmailableAddress() throws {
        let h = try FlowHarness()
        for address in [#""<evil@evil.com>"@example.com"#, #""a b"@example.com"#] {
            expectAuthError("INVALID_EMAIL") { try h.service.emailLink.send(EmailLinkRequest(email: address)) }
            expectAuthError("INVALID_EMAIL") { try h.service.passwords.requestReset(email: address, continueURL: nil, locale: nil) }
        }
        #expect(h.store.queuedMail().isEmpty)
        try h.service.emailLink.send(EmailLinkRequest(email: #""a.b"@example.com"#))
    }

    @Test("point 10: a continueUrl on another port, or carrying mode/oobCode/apiKey/lang, is refused at intake")
    func continueURLOrigin() throws {
        let h = try FlowHarness()
        for bad in ["https://app.example.com:8443/x", "https://app.example.com/x?oobCode=EVIL", "https://app.example.com/x?mode=signIn",
                    "https://app.example.com/x?apiKey=1", "https://app.example.com/x?lang=de"] {
            expectAuthError("INVALID_CONTINUE_URI") { try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", continueURL: bad)) }
        }
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", continueURL: "https://app.example.com/x?tab=1"))
    }
}

/// A token signed with Postern's own key for another audience (an OpenID Connect client's ID token
/// or access token will be: same key, same issuer) is not a session of the API.
@Suite("Attack sequences: tokens of another audience")
struct FlowTokenAudienceTests {
    /// `token`'s claims with `aud` set to `audience`, signed again with the service's own key.
    func resigned(_ token: String, audience: String, _ h: FlowHarness, type: JSONWebToken.TokenType = .jwt) throws -> String {
        let parsed = try JSONWebToken.parse(token)
        var claims = try #require(try JSONSerialization.jsonObject(with: parsed.claims) as? [String: Any])
        claims["aud"] = audience
        return try JSONWebToken.sign(claims: try JSONSerialization.data(withJSONObject: claims), with: h.keys.current.idTokenSigner, type: type)
    }

    @Test("an ID token re-signed for a client's audience is refused; re-signed for Postern's own it is taken")
    func otherAudienceRefused() throws {
        let h = try FlowHarness()
        let session = try h.service.sessions.signInAnonymously()
        #expect(try h.service.profiles.me(idToken: session.idToken).uid == session.uid)
        // The control: the same claims, signed again by the test, with the audience unchanged.
        #expect(try h.service.profiles.me(idToken: try resigned(session.idToken, audience: "https://auth.example.com", h)).uid == session.uid)
        for audience in ["grafana", "https://auth.example.com/oidc/userinfo", "https://auth.example.com/", ""] {
            let forged = try resigned(session.idToken, audience: audience, h)
            expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: forged) }
        }
    }

    @Test("a token typed as an access token (at+jwt) is refused as an ID token, even with Postern's own audience")
    func accessTokenTypeRefused() throws {
        let h = try FlowHarness()
        let session = try h.service.sessions.signInAnonymously()
        let typed = try resigned(session.idToken, audience: "https://auth.example.com", h, type: .accessToken)
        #expect(try JSONWebToken.parse(typed).type == "at+jwt")
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: typed) }
    }
}

/// A refresh token issued to an OpenID Connect client is that client's: the API's own refresh and
/// sign-out do not take it (a token leaked from a relying party does not become an API session).
@Suite("Attack sequences: a client's refresh token at the API")
struct FlowClientRefreshTokenTests {
    @Test("/v1/token refuses a client's refresh token and /v1/sign-out leaves it; the API's own token still refreshes")
    func clientTokenRefused() throws {
        let h = try FlowHarness()
        let session = try h.service.sessions.signInAnonymously()
        let now = Int64(h.clock.now().timeIntervalSince1970)
        let token = "a-refresh-token-the-provider-gave-to-grafana"
        let record = RefreshTokenRecord(
            hash: SHA256.hash(token), family: "oidc-family", uid: session.uid, authTime: now, method: "emailLink", createdAt: now,
            expiresAt: now + 86_400, clientID: "grafana")
        try h.store.write { try $0.insertRefreshToken(record) }
        expectAuthError("INVALID_REFRESH_TOKEN") { _ = try h.service.sessions.refresh(token) }
        try h.service.sessions.signOut(refreshToken: token)
        // Neither rotated nor revoked: the client's token is as it was.
        #expect(try h.store.read { try $0.refreshToken(hash: SHA256.hash(token)) } == record)
        // The control: the API's own token refreshes.
        #expect(try h.service.sessions.refresh(session.refreshToken).uid == session.uid)
    }
}
