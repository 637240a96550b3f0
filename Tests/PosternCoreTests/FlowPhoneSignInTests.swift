import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// Sign-in by phone (issue 17 point 4, `--phone-sign-in`) over the in-memory store: the email
/// link's six cases for the account that holds the number, and the code's limits.
@Suite("Phone sign-in: the six cases, one code per number, 5 tries, single use")
struct FlowPhoneSignInTests {
    static let number = "+4915112345678"

    static func harness(phoneSignIn: Bool = true) throws -> FlowHarness {
        try FlowHarness {
            $0.phoneSignIn = phoneSignIn
            $0.sms.phoneSignIn = phoneSignIn
            $0.webhooks = WebhookConfiguration(endpoints: ["https://hooks.example.com/a"])
        }
    }

    /// Sends a sign-in code to `number`; returns the SMS's code.
    static func send(_ h: FlowHarness, _ number: String = number, idToken: String? = nil) throws -> String {
        try h.service.phoneSignIn.send(phoneNumber: number, locale: "de", idToken: idToken, clientIP: "192.0.2.1")
        let sms = try #require(try h.lastSMS())
        #expect(sms.kind == .signInCode && sms.link == nil && sms.localePreferences == ["de"])
        return sms.code
    }

    static func complete(
        _ h: FlowHarness, _ code: String, _ number: String = number, idToken: String? = nil, allowMigration: Bool? = nil
    ) throws -> LoginDescriptor {
        try h.service.phoneSignIn.complete(phoneNumber: number, code: code, idToken: idToken, allowMigration: allowMigration)
    }

    static func events(_ h: FlowHarness) -> [String] { h.store.snapshot().webhooks.map(\.eventType) }

    static func wrong(_ code: String) -> String { String(format: "%06d", (Int(code)! + 1) % 1_000_000) }

    @Test("without --phone-sign-in: both refuse with PHONE_SIGN_IN_DISABLED and nothing is queued")
    func disabled() throws {
        let h = try Self.harness(phoneSignIn: false)
        expectAuthError("PHONE_SIGN_IN_DISABLED") {
            try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        }
        expectAuthError("PHONE_SIGN_IN_DISABLED") { _ = try Self.complete(h, "123456") }
        #expect(h.store.snapshot().sms.isEmpty && h.store.snapshot().phoneSignIns.isEmpty)
    }

    @Test("sign-up by phone: a new account that is not anonymous holds the number; again: the same account")
    func signUpThenSignIn() throws {
        let h = try Self.harness()
        let login = try Self.complete(h, try Self.send(h))
        #expect(login.isNewUser && login.email == nil && !login.session.isAnonymous)
        let account = try #require(try h.account(login.uid))
        #expect(account.providers == [.phone] && !account.isAnonymous && account.locale == "de")
        #expect(try h.service.phoneOwner.list(idToken: login.session.idToken).map(\.status) == [.verified])
        #expect(Self.events(h) == ["user.created", "phone.verified", "user.signed_in"])
        let created = try #require(h.store.snapshot().webhooks.first?.body)
        #expect(created.contains("\"anonymous\":false") && !created.contains("15112345678"))
        let again = try Self.complete(h, try Self.send(h))
        #expect(again.uid == login.uid && !again.isNewUser)
        #expect(try h.service.phoneOwner.list(idToken: again.session.idToken).count == 1)
        // The store never holds the number in the clear, nor the code.
        let stored = "\(h.store.snapshot().phoneSignIns) \(h.store.snapshot().phoneClaims) \(h.store.snapshot().accounts)"
        #expect(!stored.contains("15112345678"))
    }

    @Test("an anonymous session is upgraded: same uid, gets the number, user.anonymous_upgraded")
    func anonymousUpgrade() throws {
        let h = try Self.harness()
        let anonymous = try h.service.sessions.signInAnonymously()
        let login = try Self.complete(h, try Self.send(h, idToken: anonymous.idToken), idToken: anonymous.idToken)
        #expect(login.uid == anonymous.uid && login.isNewUser && !login.session.isAnonymous)
        #expect(Self.events(h).contains("user.anonymous_upgraded"))
        #expect(try h.service.phoneOwner.list(idToken: login.session.idToken).map(\.status) == [.verified])
    }

    @Test("an anonymous session and a held number: MIGRATION_REQUIRED consumes nothing, then allowMigration signs in")
    func migration() throws {
        let h = try Self.harness()
        let holder = try Self.complete(h, try Self.send(h))
        let anonymous = try h.service.sessions.signInAnonymously()
        let code = try Self.send(h, idToken: anonymous.idToken)
        expectAuthError("MIGRATION_REQUIRED") { _ = try Self.complete(h, code, idToken: anonymous.idToken) }
        // Refusing counted no try either: five wrong ones still fit before the right one.
        let login = try Self.complete(h, code, idToken: anonymous.idToken, allowMigration: false)
        #expect(login.uid == holder.uid && !login.isNewUser)
        #expect(login.migration == .init(fromUid: anonymous.uid, toUid: holder.uid, allowMigration: false))
        #expect(try h.account(anonymous.uid) == nil)
        #expect(Self.events(h).contains("user.migrated"))
    }

    @Test("a normal session links a free number; a number held by another account is CREDENTIAL_ALREADY_IN_USE")
    func linkAndInUse() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        // An old session (a stolen one, say) cannot plant a number: a recent sign-in is needed,
        // and the refusal consumes nothing.
        h.clock.advance(by: 600)
        let early = try Self.send(h, idToken: u.session.idToken)
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try Self.complete(h, early, idToken: u.session.idToken) }
        #expect(try h.service.phoneOwner.list(idToken: u.session.idToken).isEmpty)
        let fresh = try h.signIn("u@example.com")
        let linked = try Self.complete(h, early, idToken: fresh.session.idToken)
        #expect(linked.uid == u.uid && linked.isNewUser && linked.email == "u@example.com")
        #expect(try h.account(u.uid)?.providers == [.emailLink, .phone])
        // Signing in by phone to the same account again is a fresh session.
        let again = try Self.complete(h, try Self.send(h, idToken: linked.session.idToken), idToken: linked.session.idToken)
        #expect(again.uid == u.uid && !again.isNewUser)
        let other = try h.signIn("o@example.com")
        let code = try Self.send(h, idToken: other.session.idToken)
        expectAuthError("CREDENTIAL_ALREADY_IN_USE") { _ = try Self.complete(h, code, idToken: other.session.idToken) }
        // The refusal consumed nothing: without the other session the code signs in to the holder.
        #expect(try Self.complete(h, code).uid == u.uid)
    }

    @Test("a phone-only account is not anonymous to the email link: never migrated away, never upgraded")
    func phoneAccountIsNotAnonymous() throws {
        let h = try Self.harness()
        let phone = try Self.complete(h, try Self.send(h))
        #expect(phone.session.isAnonymous == false)
        // A password needs an address to sign in with: refused until the account has one.
        expectAuthError("ANONYMOUS_ACCOUNT") { _ = try h.service.passwords.setPassword(idToken: phone.session.idToken, password: "correct horse battery") }
        _ = try h.signIn("e@example.com")
        // An anonymous account would be deleted here with allowMigration; a phone account is refused.
        expectAuthError("CREDENTIAL_ALREADY_IN_USE") { _ = try h.signIn("e@example.com", idToken: phone.session.idToken, allowMigration: true) }
        #expect(try h.account(phone.uid) != nil)
        // A free address is linked to it (not an anonymous upgrade).
        let linked = try h.signIn("p@example.com", idToken: phone.session.idToken)
        #expect(linked.uid == phone.uid && !Self.events(h).contains("user.anonymous_upgraded"))
    }

    @Test("a disabled account: USER_DISABLED, and the code is not consumed")
    func disabledUser() throws {
        let h = try Self.harness()
        let login = try Self.complete(h, try Self.send(h))
        _ = try h.service.operators.updateUser(uid: login.uid, disabled: true, emailVerified: nil, displayName: nil)
        let code = try Self.send(h)
        expectAuthError("USER_DISABLED") { _ = try Self.complete(h, code) }
        _ = try h.service.operators.updateUser(uid: login.uid, disabled: false, emailVerified: nil, displayName: nil)
        #expect(try Self.complete(h, code).uid == login.uid)
    }

    @Test("5 wrong codes, then the right one is refused (the number's lock, then the code's 5 tries); a new SMS past the lock signs in")
    func fiveTries() throws {
        let h = try Self.harness()
        let code = try Self.send(h)
        for _ in 0..<5 { expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, Self.wrong(code)) } }
        // The number's guessing budget is spent: locked for 30 s, the right code included.
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { _ = try Self.complete(h, code) }
        h.clock.advance(by: 30)
        // The code itself died with its 5 tries (a try at a dead code guesses nothing: not counted).
        expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, code) }
        #expect(h.store.snapshot().phoneSignIns.values.first?.tries == 5)
        // A dead code's SMS says nothing any more.
        #expect(try h.lastSMS() == nil)
        #expect(try Self.complete(h, try Self.send(h)).isNewUser)
    }

    @Test("replayed, superseded, expired and another number's codes: one answer, INVALID_PHONE_CODE")
    func deadCodes() throws {
        let h = try Self.harness()
        let first = try Self.send(h)
        let firstSMS = try #require(h.store.snapshot().sms.last)
        let second = try Self.send(h)
        // The older SMS, if still queued, is not sent: its request is superseded.
        #expect(try h.service.smsComposer.composeSMS(firstSMS.intent, recipient: try #require(firstSMS.recipient)) == nil)
        if first != second { expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, first) } }
        _ = try Self.complete(h, second)
        expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, second) }
        let other = try Self.send(h, "+4915199999999")
        expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, other) }
        h.clock.advance(by: 600)
        expectAuthError("INVALID_PHONE_CODE") { _ = try Self.complete(h, other, "+4915199999999") }
        // Malformed input is a typed error that never echoes the number.
        expectAuthError("INVALID_ARGUMENT") { _ = try Self.complete(h, "12345") }
        let refused = expectAuthError("INVALID_PHONE_NUMBER") { _ = try Self.complete(h, "123456", "+49 151 abc") }
        #expect(!(refused?.message.contains("151") ?? true))
    }

    @Test("send: the same answer for a held and a free number, and the caps apply to signed-out callers")
    func sendAnswersAlike() throws {
        let h = try FlowHarness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
            $0.sms.numberInterval = 60
        }
        _ = try Self.complete(h, try Self.send(h))
        h.clock.advance(by: 61)
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        try h.service.phoneSignIn.send(phoneNumber: "+4915100000001", locale: nil, idToken: nil, clientIP: nil)
        // Within the cool-off both answer as a send (no oracle), and neither is sent again.
        let queued = h.store.snapshot().sms.count
        try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
        try h.service.phoneSignIn.send(phoneNumber: "+4915100000001", locale: nil, idToken: nil, clientIP: nil)
        #expect(h.store.snapshot().sms.count == queued)
        expectAuthError("SMS_COUNTRY_NOT_ALLOWED") {
            try h.service.phoneSignIn.send(phoneNumber: "+33612345678", locale: nil, idToken: nil, clientIP: nil)
        }
        expectAuthError("INVALID_ID_TOKEN") {
            try h.service.phoneSignIn.send(phoneNumber: "+4915100000002", locale: nil, idToken: "not.a.token", clientIP: nil)
        }
    }
}
