import Foundation
import PosternCore
import PosternCrypto
import Testing

@Suite("Passwords, reset and sessions")
struct FlowPasswordTests {
    @Test("verify-first sign-up: the link creates the account with the password; a taken address gets account-already-exists")
    func signUp() throws {
        let h = try FlowHarness()
        let verifier = "the-sign-up-device-verifier-0123456789abcdefgh"
        try h.service.passwords.signUp(
            email: "a@example.com", password: "correct horse", idToken: nil, continueURL: nil, locale: "de",
            codeChallenge: Base64URL.encode(SHA256.hash(verifier)))
        guard case .confirmSignUp = try #require(try h.lastMail()).message.content else {
            Issue.record("a new address gets confirm-sign-up")
            return
        }
        #expect(try h.lastMail()?.localePreferences.first == "de")
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "a@example.com", password: "correct horse", idToken: nil, allowMigration: false)
        }
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), codeVerifier: verifier))
        #expect(login.isNewUser)
        #expect(!login.needsPassword)
        let account = try #require(try h.account(login.uid))
        #expect(account.providers == [.password, .emailLink])
        #expect(account.emailVerified)
        let signedIn = try h.service.passwords.signIn(
            email: "A@example.com", password: "correct horse", idToken: nil, allowMigration: false)
        #expect(signedIn.uid == login.uid)
        #expect(signedIn.isNewUser == false)

        // Signing up again never makes a second account nor changes the password.
        try h.service.passwords.signUp(email: "a@example.com", password: "another password", idToken: nil, continueURL: nil, locale: nil)
        guard case .accountAlreadyExists = try #require(try h.lastMail()).message.content else {
            Issue.record("a taken address gets account-already-exists")
            return
        }
        let again = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        #expect(again.uid == login.uid)
        #expect(again.isNewUser == false)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "a@example.com", password: "another password", idToken: nil, allowMigration: false)
        }
    }

    @Test("sign-up with an anonymous session upgrades it when the link is completed")
    func signUpUpgradesAnonymous() throws {
        let h = try FlowHarness()
        let anonymous = try h.service.sessions.signInAnonymously()
        try h.service.passwords.signUp(email: "a@example.com", password: "correct horse", idToken: anonymous.idToken, continueURL: nil, locale: nil)
        // The same session comes back: that is the device that signed up.
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink(), idToken: anonymous.idToken))
        #expect(login.uid == anonymous.uid)
        #expect(login.isNewUser)
        #expect(try h.account(anonymous.uid)?.passwordHash != nil)
    }

    @Test("the password policy", arguments: [
        ("short", "a@example.com"), (String(repeating: "x", count: 257), "a@example.com"),
        ("a@example.com", "a@example.com"), ("A@EXAMPLE.COM", "a@example.com"), ("longlocalpart", "longlocalpart@example.com"),
    ])
    func policy(password: String, email: String) throws {
        let h = try FlowHarness()
        let error = expectAuthError("WEAK_PASSWORD") {
            try h.service.passwords.signUp(email: email, password: password, idToken: nil, continueURL: nil, locale: nil)
        }
        #expect(error?.kind == .invalidInput)
        #expect(h.store.queuedMail().isEmpty)
    }

    @Test("password sign-in: unknown address, wrong password and no password are the same error; USER_DISABLED only after a valid password")
    func passwordFailures() throws {
        let h = try FlowHarness()
        let noPassword = try h.signIn("linkonly@example.com")
        let pw = try h.signUp("pw@example.com", password: "correct horse")
        var errors: [AuthError] = []
        for (email, password) in [("nobody@example.com", "correct horse"), ("pw@example.com", "wrong horse"),
                                  ("linkonly@example.com", "correct horse"), ("not an address", "correct horse")] {
            if let error = expectAuthError("INVALID_LOGIN_CREDENTIALS", {
                _ = try h.service.passwords.signIn(email: email, password: password, idToken: nil, allowMigration: false)
            }) { errors.append(error) }
        }
        #expect(Set(errors).count == 1, "identical errors")
        _ = try h.service.operators.updateUser(uid: pw.uid, disabled: true, emailVerified: nil, displayName: nil)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "wrong horse", idToken: nil, allowMigration: false)
        }
        expectAuthError("USER_DISABLED") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "correct horse", idToken: nil, allowMigration: false)
        }
        // Disabling revokes the sessions it had.
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: pw.session.idToken) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(pw.session.refreshToken) }
        _ = noPassword
    }

    @Test("password sign-in resolves the cases too: anonymous session → MIGRATION_REQUIRED, then migrate")
    func passwordMigration() throws {
        let h = try FlowHarness()
        let owner = try h.signUp("pw@example.com", password: "correct horse")
        let anonymous = try h.service.sessions.signInAnonymously()
        expectAuthError("MIGRATION_REQUIRED") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "correct horse", idToken: anonymous.idToken, allowMigration: nil)
        }
        let login = try h.service.passwords.signIn(
            email: "pw@example.com", password: "correct horse", idToken: anonymous.idToken, allowMigration: true)
        #expect(login.migration?.fromUid == anonymous.uid)
        #expect(login.migration?.toUid == owner.uid)
        #expect(try h.account(anonymous.uid) == nil)
        let other = try h.signIn("other@example.com")
        expectAuthError("CREDENTIAL_ALREADY_IN_USE") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "correct horse", idToken: other.session.idToken, allowMigration: false)
        }
    }

    @Test("reset: inspect consumes nothing; apply sets the password, revokes sessions, kills other reset links, queues a notice")
    func reset() throws {
        let h = try FlowHarness()
        let login = try h.signUp("a@example.com", password: "old password")

        try h.service.passwords.requestReset(email: "a@example.com", continueURL: "https://app.example.com/done", locale: nil)
        let first = try h.lastLink()
        try h.service.passwords.requestReset(email: "a@example.com", continueURL: nil, locale: nil)
        let second = try h.lastLink()
        for _ in 0..<3 {
            let info = try h.service.addresses.inspect(link: first, oobCode: nil)
            #expect(info.mode == .resetPassword)
            #expect(info.email == "a@example.com")
            #expect(info.continueURL == "https://app.example.com/done")
        }
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.addresses.apply(link: first, oobCode: nil, newPassword: nil) }
        expectAuthError("WEAK_PASSWORD") { _ = try h.service.addresses.apply(link: first, oobCode: nil, newPassword: "short") }
        let applied = try h.service.addresses.apply(link: first, oobCode: nil, newPassword: "new password")
        #expect(applied.mode == .resetPassword)
        guard case .passwordChanged = h.store.queuedMail().last?.intent else {
            Issue.record("a password-changed notice is queued")
            return
        }
        expectAuthError("LINK_USED") { _ = try h.service.addresses.apply(link: first, oobCode: nil, newPassword: "other password") }
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.addresses.inspect(link: second, oobCode: nil) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: login.session.idToken) }
        _ = try h.service.passwords.signIn(email: "a@example.com", password: "new password", idToken: nil, allowMigration: false)
    }

    @Test("a reset for an unknown address sends nothing (or the no-account notice when enabled)")
    func resetUnknown() throws {
        let h = try FlowHarness()
        try h.service.passwords.requestReset(email: "nobody@example.com", continueURL: nil, locale: nil)
        #expect(h.store.queuedMail().count == 1, "recorded like any other address")
        #expect(try h.lastMail() == nil)
        let noisy = try FlowHarness { $0.sendNoAccountMail = true }
        try noisy.service.passwords.requestReset(email: "nobody@example.com", continueURL: nil, locale: nil)
        guard case .noAccount = try #require(try noisy.lastMail()).message.content else {
            Issue.record("the no-account notice")
            return
        }
    }

    @Test("refresh tokens rotate; a rotated-out token revokes its family; sign-out revokes")
    func refreshRotation() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        let next = try h.service.sessions.refresh(login.session.refreshToken)
        #expect(next.refreshToken != login.session.refreshToken)
        let third = try h.service.sessions.refresh(next.refreshToken)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(third.refreshToken) }
        expectAuthError("INVALID_REFRESH_TOKEN") { _ = try h.service.sessions.refresh("made-up") }
        let other = try h.signIn("a@example.com")
        try h.service.sessions.signOut(refreshToken: other.session.refreshToken)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(other.session.refreshToken) }
    }

    @Test("ID tokens expire and carry the claims of API.md")
    func idTokens() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        let parts = login.session.idToken.split(separator: ".")
        let payload = try #require(Base64URLTestDecode(String(parts[1])))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        for key in ["sub", "iat", "exp", "auth_time", "email", "email_verified", "is_anonymous", "sign_in_method"] {
            #expect(claims[key] != nil, "claim \(key)")
        }
        #expect(claims["sign_in_method"] as? String == "emailLink")
        h.clock.advance(by: 3600)
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: login.session.idToken) }
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: "not.a.token") }
    }

    @Test("set password needs a recent sign-in, revokes other sessions and mails a notice")
    func setPassword() throws {
        let h = try FlowHarness()
        let login = try h.signIn("a@example.com")
        let fresh = try h.service.passwords.setPassword(idToken: login.session.idToken, password: "a new password")
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(login.session.refreshToken) }
        _ = try h.service.sessions.refresh(fresh.refreshToken)
        h.clock.advance(by: 301)
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try h.service.passwords.setPassword(idToken: fresh.idToken, password: "another one!") }
        _ = try h.service.passwords.signIn(email: "a@example.com", password: "a new password", idToken: nil, allowMigration: false)
    }
}

func Base64URLTestDecode(_ text: String) -> [UInt8]? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64).map(Array.init)
}
