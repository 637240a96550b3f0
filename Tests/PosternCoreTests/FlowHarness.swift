import Foundation
import PosternCore
import PosternCrypto
import Testing
import PosternTestSupport

/// The flows over the in-memory store, a manual clock and cheap scrypt parameters.
struct FlowHarness {
    let clock: ManualClock
    let store: InMemoryStore
    let service: AuthService
    /// The key ring the service signs with (for tests that sign tokens of their own with it).
    let keys: KeyRingCache

    /// `restarting`: the service of another harness started again over its store and clock (its
    /// keys are in the store), with this configuration: a daemon restarted with new settings.
    init(
        identityProviders: ProviderRegistry = .none, challengeHTTP: (any ProviderHTTP)? = nil,
        deliveryEventSources: DeliveryEventSources = .none, hookHTTP: (any HookHTTP)? = nil, restarting previous: FlowHarness? = nil,
        configure: (inout AuthConfiguration) -> Void = { _ in }
    ) throws {
        clock = previous?.clock ?? ManualClock()
        store = previous?.store ?? InMemoryStore()
        let vault = KeyVault(
            store: store, box: try SecretBox(key: Array(repeating: 7, count: 32)), clock: clock, maxCodeLifetime: 7 * 86_400,
            rsaKeys: .madeOncePerProcess)
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: ["app.example.com"])
        config.mailInterval = 0
        config.mailPerHour = 0
        config.sms = SMSConfiguration(countries: ["DE", "GB", "US"])
        // The caps have their own tests (SMSAdmission); the flows' tests send as many as they need.
        config.sms.numberInterval = 0
        config.sms.numberPerHour = 0
        config.sms.ipPerHour = 0
        config.sms.defaultCountryPerHour = 0
        config.sms.globalPerDay = 0
        configure(&config)
        keys = try KeyRingCache(vault: vault, clock: clock)
        service = try AuthService(
            store: store, keys: keys, clock: clock, config: config, hasher: .fastForTests, identityProviders: identityProviders,
            challengeHTTP: challengeHTTP, deliveryEventSources: deliveryEventSources, hookHTTP: hookHTTP)
    }

    /// Runs the content stage on the newest queued mail.
    func lastMail() throws -> ComposedMail? {
        guard let queued = store.queuedMail().last else { return nil }
        return try service.mailComposer.compose(queued.intent, recipient: queued.recipient)
    }

    /// The 6-digit code of the newest sign-in mail.
    func lastCode() throws -> String {
        guard case .signIn(_, let code, _) = try lastMail()?.message.content else { throw HarnessError.noMail }
        return code
    }

    /// A sign-in link for `email` that has been used: sent, then completed once.
    func usedLink(_ email: String) throws -> String {
        try service.emailLink.send(EmailLinkRequest(email: email))
        let link = try lastLink()
        _ = try service.emailLink.complete(EmailLinkCompletion(link: link))
        return link
    }

    /// The link of the newest queued mail.
    func lastLink() throws -> String {
        guard let mail = try lastMail() else { throw HarnessError.noMail }
        switch mail.message.content {
        case .signIn(let link, _, _), .confirmSignUp(let link, _), .resetPassword(let link, _), .verifyEmail(let link, _),
            .verifyAndChangeEmail(let link, _, _, _), .recoverEmail(let link, _, _, _):
            return link
        case .accountAlreadyExists(let link, _, _), .invitation(let link, _):
            return link
        default:
            throw HarnessError.noLink
        }
    }

    /// Signs in `email` by email link, creating the account if needed.
    @discardableResult
    func signIn(_ email: String, idToken: String? = nil, allowMigration: Bool? = nil) throws -> LoginDescriptor {
        // Asked for by the session that completes it, as the client library does.
        try service.emailLink.send(EmailLinkRequest(email: email, idToken: idToken))
        return try service.emailLink.complete(
            EmailLinkCompletion(link: try lastLink(), idToken: idToken, allowMigration: allowMigration))
    }

    /// Signs `email` up with `password` and confirms on the same device (the PKCE verifier), so
    /// the password applies.
    @discardableResult
    func signUp(_ email: String, password: String, idToken: String? = nil) throws -> LoginDescriptor {
        let verifier = "sign-up-verifier-" + Base64URL.encode(try SecureRandom.bytes(24))
        try service.passwords.signUp(
            email: email, password: password, idToken: idToken, continueURL: nil, locale: nil,
            codeChallenge: Base64URL.encode(SHA256.hash(verifier)))
        return try service.emailLink.complete(EmailLinkCompletion(link: try lastLink(), codeVerifier: verifier))
    }

    /// The newest queued SMS, composed: its code and link (nil when there is nothing to send).
    func lastSMS() throws -> SMSContent? {
        guard let queued = store.snapshot().sms.last, let recipient = queued.recipient else { return nil }
        return try service.smsComposer.composeSMS(queued.intent, recipient: recipient)
    }

    /// The code of the newest queued SMS.
    func lastSMSCode() throws -> String {
        guard let sms = try lastSMS() else { throw HarnessError.noMail }
        return sms.code
    }

    func account(_ uid: String) throws -> Account? { try store.read { try $0.account(uid: uid) } }

    enum HarnessError: Error { case noMail, noLink }
}

/// Expects `body` to throw an `AuthError` with `code`; returns it.
@discardableResult
func expectAuthError(
    _ code: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> AuthError? {
    do {
        try body()
        Issue.record("expected \(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as AuthError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
