import Foundation
import PosternAPI
import PosternCrypto

/// The OpenID Connect provider (OpenID Connect Core 1.0, the authorization code flow): the
/// authorization endpoint's decisions and the hosted sign-in page's steps (here), the token,
/// userinfo and revocation endpoints (`OIDCFlow+Tokens`), and RP-initiated logout
/// (`OIDCFlow+Logout`). The hosted page signs people in through the existing flows (the email
/// link bound to the browser, its 6-digit code, a password), then keeps a browser session of its
/// own so that the next client, or `prompt=none`, needs no mail. See docs/oidc.md.
public final class OIDCFlow: Sendable {
    /// The persisters this flow's transactions use.
    typealias Writes = any AccountWriter & SessionWriter & OIDCWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & SessionReader & OIDCReader & WebhookReader

    /// How long an authorization code may be redeemed.
    static let codeLifetime: Int64 = 60
    /// How long the hosted page keeps a request waiting for its sign-in (a sign-in link's life).
    static let pendingLifetime: Int64 = 900
    /// The `amr` values (RFC 8176's `pwd` and `otp`; Postern's own `link` for the emailed link
    /// and `approval` for approve-on-another-device, which RFC 8176 has no values for; `fed` for an
    /// identity provider's sign-in, as Microsoft's tokens name a federated one).
    public enum Method: String, Sendable {
        case link, otp, pwd, approval, fed
    }

    let context: FlowContext
    let emailLink: EmailLinkFlow
    let passwords: PasswordFlow
    let sessions: SessionFlow
    let providerSignIn: ProviderSignInFlow

    init(context: FlowContext, emailLink: EmailLinkFlow, passwords: PasswordFlow, sessions: SessionFlow, providerSignIn: ProviderSignInFlow) {
        self.context = context
        self.emailLink = emailLink
        self.passwords = passwords
        self.sessions = sessions
        self.providerSignIn = providerSignIn
    }

    /// The issuer: `--public-url`, exactly.
    public var issuer: String { context.config.publicURL }

    /// How long a browser session lives, in seconds (its cookie's `Max-Age`).
    public var sessionLifetime: Int64 { context.config.oidcSessionLifetime }

    /// Where the email link sends the browser back to finish request `id` (the action page turns it
    /// into a button that posts to it).
    public func resumeURL(request id: String) -> String { issuer + OIDCDiscovery.Path.resume + "?request=" + id }

    /// The pending request id a sign-in link's continue URL names, when the link was sent by the
    /// hosted page; nil for any other continue URL.
    public func pendingRequestID(continueURL: String?) -> String? {
        let prefix = resumeURL(request: "")
        guard let continueURL, continueURL.hasPrefix(prefix) else { return nil }
        let id = String(continueURL.dropFirst(prefix.count))
        return Self.isRandomID(id) ? id : nil
    }

    // MARK: the authorization endpoint

    /// Decides an authorization request (`GET` or `POST /oidc/authorize`) from this browser:
    /// `browser` is its `postern_browser` cookie (the caller sets one first if it had none),
    /// `session` its browser-session cookie, if any. A live session that satisfies `prompt` and
    /// `max_age` (and the hint), with a consent or a first-party client, gets a code at once;
    /// otherwise the request is kept, bound to this browser, for the sign-in or consent page.
    /// - Throws: `AuthError` when the store fails.
    public func authorize(_ parameters: [(name: String, value: String)], browser: String, session: String?) throws(AuthError) -> OIDCPageOutcome {
        let clientID = parameters.first { $0.name == "client_id" }?.value
        let client = try clientID.map { id throws(AuthError) in try context.read { (tx: Reads) in try tx.oidcClient(id: id) } } ?? nil
        let request: OIDCAuthorizationRequest
        switch OIDCAuthorizationRequest.validate(parameters, client: { $0 == clientID ? client : nil }) {
        case .refusedOnPage:
            return .refused(client == nil ? .unknownClient : .badRedirectURI)
        case .refusedToClient(let redirectURI, let error, let description, let state):
            return .redirect(errorRedirect(redirectURI, error: error, description: description, state: state))
        case .valid(let valid):
            request = valid
        }
        let now = context.clock.unixSeconds()
        let hintSubject = request.idTokenHint.flatMap { verifiedHint($0)?.subject }
        let signedIn = try liveSession(session, now: now).flatMap { found -> LiveSession? in
            if request.prompt.contains(.login) { return nil }
            if let maxAge = request.maxAge, now - found.record.authTime > maxAge { return nil }
            if let hintSubject, hintSubject != found.account.uid { return nil }
            return found
        }
        if let signedIn {
            let consented = try hasConsent(request, uid: signedIn.account.uid)
            if consented { return .redirect(try issueCode(request, session: signedIn.record, pendingID: nil, now: now)) }
            if request.prompt.contains(.none) {
                return .redirect(errorRedirect(request, error: "consent_required", description: "the person has not consented to this client"))
            }
            let pending = try keep(parameters, request: request, browser: browser, now: now)
            return .consent(pending, email: signedIn.account.email?.address ?? "")
        }
        if request.prompt.contains(.none) {
            return .redirect(errorRedirect(request, error: "login_required", description: "nobody is signed in here"))
        }
        return .signIn(try keep(parameters, request: request, browser: browser, now: now), retry: nil)
    }

    // MARK: the hosted page's steps

    /// The sign-in page of request `id` again (the "use another address" button), for the browser
    /// it belongs to.
    public func restart(request id: String, browser: String?) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in .signIn(found.view, retry: nil) }
    }

    /// What the action page shows for a sign-in link sent by request `id`, opened in `browser`:
    /// the request (a button that posts the link to ``completeWithLink(request:browser:oobCode:session:)``),
    /// or why not (another browser: type the code where the sign-in began).
    public func continuation(request id: String, browser: String?) throws(AuthError) -> Result<OIDCPending, OIDCPageRefusal> {
        try pending(id, browser: browser).map(\.view)
    }

    /// Mails a sign-in link (bound to this browser) and its 6-digit code to `email`, through the
    /// email link's send with its limits. The same page follows for every address.
    /// - Throws: `AuthError` for the limits (`TOO_MANY_ATTEMPTS_TRY_LATER`) and the store.
    public func sendLink(
        request id: String, browser: String?, email: String, challengePass: ChallengePass = .none
    ) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in
            guard let browser else { return .refused(.otherBrowser) }
            let typed = email.trimmingCharacters(in: .whitespaces)
            do throws(AuthError) {
                try emailLink.send(
                    EmailLinkRequest(
                        email: typed, continueURL: resumeURL(request: id), locale: found.request.uiLocales.first,
                        browserVerifier: browser, challengePass: challengePass))
            } catch where error.code == APIErrorCode.invalidEmail.rawValue {
                return .signIn(found.view, retry: .badAddress)
            } catch where error.code == APIErrorCode.challengeRequired.rawValue {
                return .signIn(found.view, retry: .challenge)
            }
            return .checkMail(found.view, email: typed, retry: false)
        }
    }

    /// Completes request `id` with the 6-digit code mailed to `email`, typed in the browser holding
    /// the request; `session`: the browser's session cookie, replaced by a new one.
    /// - Throws: `AuthError` for the guess budget and the store.
    public func completeWithCode(request id: String, browser: String?, email: String, code: String, session: String?) throws(AuthError) -> OIDCPageAnswer {
        try signInStep(id, browser: browser) { found throws(AuthError) in
            let typed = email.trimmingCharacters(in: .whitespaces)
            let login: LoginDescriptor
            do throws(AuthError) {
                login = try emailLink.complete(EmailLinkCompletion(code: code, email: typed))
            } catch where Self.isWrongSecret(error) {
                return OIDCPageAnswer(.checkMail(found.view, email: typed, retry: true))
            }
            return try signedIn(found, login: login, method: .otp, replacing: session)
        }
    }

    /// Completes request `id` with the sign-in link's code, opened in the browser that asked for it:
    /// any other browser (a phone's mail app, a scanner with its own cookies) completes nothing.
    /// - Throws: `AuthError` for the store.
    public func completeWithLink(request id: String, browser: String?, oobCode: String, session: String?) throws(AuthError) -> OIDCPageAnswer {
        try signInStep(id, browser: browser) { found throws(AuthError) in
            // Only a link the hosted page sent for this browser: a link asked for elsewhere (the
            // API's send-link, with this page's continue URL) is nobody's proof of this browser.
            guard let check = emailLink.ledger.browserCheck(oobCode: oobCode, browserVerifier: browser) else {
                return OIDCPageAnswer(.refused(.requestExpired))
            }
            guard check.browserBound, check.binding == .sameBrowser else { return OIDCPageAnswer(.refused(.otherBrowser)) }
            let login: LoginDescriptor
            do throws(AuthError) {
                login = try emailLink.complete(EmailLinkCompletion(oobCode: oobCode, browserVerifier: browser))
            } catch where error.code == APIErrorCode.linkOtherBrowser.rawValue {
                return OIDCPageAnswer(.refused(.otherBrowser))
            } catch where error.kind == .invalidInput || error.kind == .notFound || error.kind == .conflict {
                // Used, expired, superseded, or not a sign-in link: start again from the application.
                return OIDCPageAnswer(.refused(.requestExpired))
            }
            return try signedIn(found, login: login, method: .link, replacing: session)
        }
    }

    /// Completes request `id` with an address and password.
    /// - Throws: `AuthError` for the guess budget and the store.
    public func completeWithPassword(request id: String, browser: String?, email: String, password: String, session: String?) throws(AuthError) -> OIDCPageAnswer {
        try signInStep(id, browser: browser) { found throws(AuthError) in
            let login: LoginDescriptor
            do throws(AuthError) {
                login = try passwords.signIn(email: email.trimmingCharacters(in: .whitespaces), password: password, idToken: nil, allowMigration: nil)
            } catch where Self.isWrongSecret(error) || error.code == APIErrorCode.userDisabled.rawValue {
                return OIDCPageAnswer(.signIn(found.view, retry: .wrongPassword))
            }
            return try signedIn(found, login: login, method: .pwd, replacing: session)
        }
    }

    /// "Forgot your password?": a reset link to `email` (the same page for every address).
    /// - Throws: `AuthError` for the limits and the store.
    public func forgotPassword(
        request id: String, browser: String?, email: String, challengePass: ChallengePass = .none
    ) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in
            let typed = email.trimmingCharacters(in: .whitespaces)
            do throws(AuthError) {
                try passwords.requestReset(
                    email: typed, continueURL: nil, locale: found.request.uiLocales.first, challengePass: challengePass)
            } catch where error.code == APIErrorCode.invalidEmail.rawValue {
                return .signIn(found.view, retry: .badAddress)
            } catch where error.code == APIErrorCode.challengeRequired.rawValue {
                return .signIn(found.view, retry: .challenge)
            }
            return .forgotSent(found.view, email: typed)
        }
    }

    /// The consent screen's answer for request `id`, from the browser session that saw it.
    /// - Throws: `AuthError` for the store.
    public func consent(request id: String, browser: String?, session: String?, allow: Bool) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in
            let now = context.clock.unixSeconds()
            guard let signedIn = try liveSession(session, now: now) else { return .signIn(found.view, retry: nil) }
            guard allow else {
                _ = try context.write { (tx: Writes) in try tx.deleteOIDCPendingRequest(id: id) }
                return .redirect(errorRedirect(found.request, error: "access_denied", description: "the person did not allow it"))
            }
            let consent = OIDCConsent(uid: signedIn.account.uid, clientID: found.request.client.clientID, scopes: found.request.scopes, grantedAt: now)
            return .redirect(try issueCode(found.request, session: signedIn.record, pendingID: id, now: now, consent: consent))
        }
    }

    // MARK: consents, for their owner

    /// The clients `idToken`'s account consented to.
    /// - Throws: `AuthError.invalidIDToken` and the store's.
    public func consents(idToken: String) throws(AuthError) -> [OIDCConsent] {
        let uid = try sessions.verifyIDToken(idToken).account.uid
        return try context.read { (tx: Reads) in try tx.oidcConsents(uid: uid) }
    }

    /// Withdraws the consent to `clientID` of `idToken`'s account, and ends the refresh tokens that
    /// client holds for it. False when there was none.
    /// - Throws: `AuthError.invalidIDToken` and the store's.
    public func withdrawConsent(idToken: String, clientID: String) throws(AuthError) -> Bool {
        let uid = try sessions.verifyIDToken(idToken).account.uid
        return try context.write { (tx: Writes) in try tx.deleteOIDCConsent(uid: uid, clientID: clientID) }
    }

    // MARK: the pieces

    /// A request found for this browser: the stored row, the request checked again, what pages show.
    struct Pending: Sendable {
        let record: OIDCPendingRequest
        let request: OIDCAuthorizationRequest
        var view: OIDCPending {
            OIDCPending(
                id: record.id, clientName: request.client.name, scopes: request.scopes, loginHint: request.loginHint,
                uiLocales: request.uiLocales)
        }
    }

    /// Runs a step of the hosted page on request `id` from `browser`: `body` with the request, or
    /// the page that says why there is none (expired, another browser's, its client removed).
    func step(_ id: String, browser: String?, _ body: (Pending) throws(AuthError) -> OIDCPageOutcome) throws(AuthError) -> OIDCPageOutcome {
        switch try pending(id, browser: browser) {
        case .failure(let refusal): return .refused(refusal)
        case .success(let found): return try body(found)
        }
    }

    /// ``step(_:browser:_:)`` for a step that may sign someone in.
    func signInStep(_ id: String, browser: String?, _ body: (Pending) throws(AuthError) -> OIDCPageAnswer) throws(AuthError) -> OIDCPageAnswer {
        switch try pending(id, browser: browser) {
        case .failure(let refusal): return OIDCPageAnswer(.refused(refusal))
        case .success(let found):
            do throws(AuthError) {
                return try body(found)
            } catch where error.code == APIErrorCode.hookDenied.rawValue {
                // The operator's hook said no: the page says its words, and the person may try
                // another way in (the hook decides again).
                return OIDCPageAnswer(.signIn(found.view, retry: .hookDenied(message: error.message)))
            }
        }
    }

    /// Request `id` if it is live and this browser's, checked again against the client as it is
    /// registered now; else why not.
    func pending(_ id: String, browser: String?) throws(AuthError) -> Result<Pending, OIDCPageRefusal> {
        guard Self.isRandomID(id) else { return .failure(.requestExpired) }
        let now = context.clock.unixSeconds()
        let found = try context.read { (tx: Reads) -> (OIDCPendingRequest, OIDCClient?)? in
            guard let record = try tx.oidcPendingRequest(id: id) else { return nil }
            return (record, try tx.oidcClient(id: record.clientID))
        }
        guard let (record, client) = found, record.expiresAt > now else { return .failure(.requestExpired) }
        guard let browser, ConstantTime.equals(SHA256.hash(browser), record.browserHash) else { return .failure(.otherBrowser) }
        guard let client else { return .failure(.unknownClient) }
        switch OIDCAuthorizationRequest.validate(record.parameters.map { ($0.key, $0.value) }, client: { $0 == client.clientID ? client : nil }) {
        case .valid(let request): return .success(Pending(record: record, request: request))
        case .refusedOnPage: return .failure(.badRedirectURI)
        case .refusedToClient: return .failure(.requestExpired)
        }
    }

    /// Keeps a checked request for the hosted page, bound to `browser`.
    private func keep(
        _ parameters: [(name: String, value: String)], request: OIDCAuthorizationRequest, browser: String, now: Int64
    ) throws(AuthError) -> OIDCPending {
        let id = try Self.randomToken()
        var kept: [String: String] = [:]
        // The hint is an ID token: it decided this request, and is not kept in the database.
        for (name, value) in parameters where name != "id_token_hint" { kept[name] = value }
        let record = OIDCPendingRequest(
            id: id, browserHash: SHA256.hash(browser), clientID: request.client.clientID, parameters: kept, createdAt: now,
            expiresAt: now + Self.pendingLifetime)
        try context.write { (tx: Writes) in try tx.insertOIDCPendingRequest(record) }
        return Pending(record: record, request: request).view
    }

    /// A browser session that is live: not expired, its account there, enabled, and not signed
    /// out everywhere since (`sessionVersion`).
    struct LiveSession: Sendable {
        let record: OIDCBrowserSession
        let account: Account
    }

    func liveSession(_ cookie: String?, now: Int64) throws(AuthError) -> LiveSession? {
        guard let cookie, !cookie.isEmpty else { return nil }
        let hash = SHA256.hash(cookie)
        return try context.read { (tx: Reads) -> LiveSession? in
            guard let record = try tx.oidcBrowserSession(hash: hash), record.expiresAt > now,
                let account = try tx.account(uid: record.uid), !account.disabled, account.sessionVersion == record.sessionVersion
            else { return nil }
            return LiveSession(record: record, account: account)
        }
    }

    /// Whether `uid` may be given a code for `request` without the consent screen.
    private func hasConsent(_ request: OIDCAuthorizationRequest, uid: String) throws(AuthError) -> Bool {
        if request.client.firstParty { return true }
        if request.prompt.contains(.consent) { return false }
        let clientID = request.client.clientID
        guard let consent = try context.read({ (tx: Reads) in try tx.oidcConsent(uid: uid, clientID: clientID) }) else { return false }
        return Set(request.scopes).isSubset(of: consent.scopes)
    }

    /// After a sign-in on the hosted page: the API session the sign-in flow issued is revoked
    /// (nobody holds it), the browser's old session ends and a new one starts; then the consent
    /// screen, or a code.
    func signedIn(_ found: Pending, login: LoginDescriptor, method: Method, replacing old: String?) throws(AuthError) -> OIDCPageAnswer {
        try signedIn(found, uid: login.uid, email: login.email, method: method, apiRefreshToken: login.session.refreshToken, replacing: old)
    }

    /// ``signedIn(_:login:method:replacing:)`` for account `uid`, whose sign-in issued the API
    /// session of `apiRefreshToken` (nil when it issued none: a provider's).
    func signedIn(
        _ found: Pending, uid: String, email: String?, method: Method, apiRefreshToken: String?, replacing old: String?
    ) throws(AuthError) -> OIDCPageAnswer {
        let now = context.clock.unixSeconds()
        let cookie = try Self.randomToken()
        let lifetime = context.config.oidcSessionLifetime
        let apiToken = apiRefreshToken.map(SHA256.hash)
        let oldHash = old.map(SHA256.hash)
        let record = try context.write { (tx: Writes) -> OIDCBrowserSession in
            if let apiToken, let issued = try tx.refreshToken(hash: apiToken) { _ = try tx.revokeRefreshFamily(issued.family) }
            if let oldHash { _ = try tx.deleteOIDCBrowserSession(hash: oldHash) }
            guard let account = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
            let session = OIDCBrowserSession(
                hash: SHA256.hash(cookie), uid: account.uid, authTime: now, methods: [method.rawValue],
                sessionVersion: account.sessionVersion, createdAt: now, expiresAt: now + lifetime)
            try tx.insertOIDCBrowserSession(session)
            return session
        }
        if try hasConsent(found.request, uid: uid) {
            return OIDCPageAnswer(.redirect(try issueCode(found.request, session: record, pendingID: found.record.id, now: now)), newSession: cookie)
        }
        return OIDCPageAnswer(.consent(found.view, email: email ?? ""), newSession: cookie)
    }

    /// Issues a code for `request` to the session's account (recording `consent` and forgetting
    /// the pending request in the same transaction) and answers the redirect that carries it.
    private func issueCode(
        _ request: OIDCAuthorizationRequest, session: OIDCBrowserSession, pendingID: String?, now: Int64, consent: OIDCConsent? = nil
    ) throws(AuthError) -> String {
        let code = try Self.randomToken()
        let record = AuthorizationCodeRecord(
            codeHash: SHA256.hash(code), clientID: request.client.clientID, uid: session.uid, redirectURI: request.redirectURI,
            scopes: request.scopes, nonce: request.nonce, codeChallenge: request.codeChallenge, authTime: session.authTime,
            methods: session.methods, refreshFamily: try FlowContext.newID(), createdAt: now, expiresAt: now + Self.codeLifetime)
        try context.write { (tx: Writes) in
            if let consent { try tx.upsertOIDCConsent(consent) }
            if let pendingID { _ = try tx.deleteOIDCPendingRequest(id: pendingID) }
            try tx.insertAuthorizationCode(record)
        }
        return Self.redirect(request.redirectURI, ["code": code, "state": request.state, "iss": issuer])
    }

    /// The error redirect of a checked request.
    private func errorRedirect(_ request: OIDCAuthorizationRequest, error: String, description: String) -> String {
        errorRedirect(request.redirectURI, error: error, description: description, state: request.state)
    }

    private func errorRedirect(_ redirectURI: String, error: String, description: String, state: String?) -> String {
        Self.redirect(redirectURI, ["error": error, "error_description": description, "state": state, "iss": issuer])
    }

    /// `uri` with `parameters` (those not nil) added to its query, in this order (RFC 6749 §4.1.2:
    /// the registered URI's own query is kept).
    static func redirect(_ uri: String, _ parameters: KeyValuePairs<String, String?>) -> String {
        var result = uri
        var separator = uri.contains("?") ? (uri.hasSuffix("?") || uri.hasSuffix("&") ? "" : "&") : "?"
        for (name, value) in parameters {
            guard let value else { continue }
            result += separator + name + "=" + Self.formEncoded(value)
            separator = "&"
        }
        return result
    }

    /// `value` percent-encoded for a query (everything but RFC 3986's unreserved characters).
    static func formEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            if AppLinkCharacters.isLetter(byte) || AppLinkCharacters.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// 32 random bytes, base64url: codes, request ids, session and browser cookies, client secrets.
    public static func randomToken() throws(AuthError) -> String {
        do { return Base64URL.encode(try SecureRandom.bytes(32)) } catch { throw .internalError("\(error)") }
    }

    /// Whether `text` has the shape of ``randomToken()``.
    static func isRandomID(_ text: String) -> Bool { text.utf8.count == 43 && Base64URL.decode(text)?.count == 32 }

    /// A wrong code or password, as opposed to a limit or the store's failure.
    static func isWrongSecret(_ error: AuthError) -> Bool { error.kind == .invalidInput }
}
