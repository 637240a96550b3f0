import Foundation
import PosternAPI

extension PosternAuth {
    // MARK: Anonymous accounts

    /// Signs in a new anonymous (guest) account.
    /// - Throws: `.invalidArgument` when someone is signed in already (sign out first); network
    ///   and server failures.
    @discardableResult
    public func signInAnonymously() async throws(PosternAuthError) -> User {
        guard state.session == nil else { throw .invalidArgument("Someone is signed in on this device; sign out first.") }
        adopt(try await transport.send("POST", "/v1/accounts/anonymous", body: EmptyBody(), as: SessionBody.self))
        return try await reloadUser()
    }

    // MARK: Email links

    /// Mails a sign-in link and 6-digit code to `email`. The request carries a PKCE challenge and
    /// this device keeps the verifier, so the link completes here without the address; on another
    /// device it needs the address. The server answers the same whether or not the address has an
    /// account. A signed-in anonymous user keeps its uid when the link completes.
    /// - Parameter challengeSolution: a solved challenge, when the server asks for one (see
    ///   `solveChallenge()`; a proof of work is solved here when `Configuration.solvesProofOfWork`).
    /// - Throws: `.invalidEmail`, `.invalidContinueURL`, `.tooManyAttempts`, `.challengeRequired`
    ///   (a CAPTCHA to show, or a proof of work refused twice), network and server failures.
    public func sendSignInLink(
        to email: String, continueURL: URL? = nil, locale: String? = nil, challengeSolution: String? = nil
    ) async throws(PosternAuthError) {
        let pkce = PKCE.make()
        let token = state.session == nil ? nil : try? await idToken()
        try await solvingChallenge(challengeSolution) { solution throws(PosternAuthError) in
            try await transport.send(
                "POST", "/v1/email-link/send",
                body: EmailLinkSendBody(
                    email: email, continueUrl: continueURL?.absoluteString, locale: locale, codeChallenge: pkce?.challenge, idToken: token,
                    challengeSolution: solution))
        }
        state.pendingLink = PendingLink(email: email, codeVerifier: pkce?.verifier)
        state.lastEmail = email
        persist()
    }

    /// FUAP's welcome screen without an oracle: mails the link (always) and says which screen
    /// comes next from what this device knows — never from the server, which does not say
    /// whether `email` has an account.
    /// - Throws: as `sendSignInLink(to:continueURL:locale:challengeSolution:)`.
    public func welcome(
        email: String, continueURL: URL? = nil, locale: String? = nil, challengeSolution: String? = nil
    ) async throws(PosternAuthError) -> WelcomeRoute {
        try await sendSignInLink(to: email, continueURL: continueURL, locale: locale, challengeSolution: challengeSolution)
        return state.passwordEmails.contains(email.lowercased()) ? .linkSentOrPassword(email: email) : .linkSent(email: email)
    }

    /// Whether `url` is a sign-in link of this server: the app's deep-link handler asks this
    /// before passing the URL to `handle(_:allowMigration:)`.
    public nonisolated func canHandle(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let host = components.host?.lowercased(), configuration.linkHosts.contains(host),
              components.path == "/action" || components.path.hasSuffix("/action")
        else { return false }
        let items = components.queryItems ?? []
        return items.contains { $0.name == "mode" && $0.value == "signIn" } && items.contains { $0.name == "oobCode" && !($0.value ?? "").isEmpty }
    }

    /// Completes the sign-in link the app was opened with. See `login(with:…)`.
    @discardableResult
    public func handle(_ url: URL, allowMigration: Bool? = nil) async throws(PosternAuthError) -> LoginDescriptor {
        try await login(with: .emailLink(url.absoluteString), allowMigration: allowMigration)
    }

    /// Completes the sign-in link in text the user pasted (a whole mail, a rewritten link).
    @discardableResult
    public func handle(pasted text: String, allowMigration: Bool? = nil) async throws(PosternAuthError) -> LoginDescriptor {
        try await login(with: .emailLink(text), allowMigration: allowMigration)
    }

    // MARK: Phone numbers (a server with --phone-sign-in)

    /// Sends a sign-in code by SMS to `phoneNumber` (E.164, `+4915112345678`; spaces and dashes
    /// are fine). The server answers the same whether or not an account holds the number; a newer
    /// code supersedes the older. Then `signIn(phoneNumber:code:allowMigration:)`. A signed-in
    /// anonymous user keeps its uid when the code completes.
    /// - Parameter challengeSolution: as for `sendSignInLink(to:continueURL:locale:challengeSolution:)`.
    /// - Throws: `.phoneSignInDisabled` on a server without `--phone-sign-in`,
    ///   `.invalidPhoneNumber`, `.smsCountryNotAllowed`, `.tooManyAttempts`, `.challengeRequired`,
    ///   network and server failures.
    public func sendPhoneSignInCode(to phoneNumber: String, locale: String? = nil, challengeSolution: String? = nil) async throws(PosternAuthError) {
        let token = state.session == nil ? nil : try? await idToken()
        try await solvingChallenge(challengeSolution) { solution throws(PosternAuthError) in
            try await transport.send(
                "POST", "/v1/phone/send",
                body: PhoneSignInSendBody(phoneNumber: phoneNumber, locale: locale, idToken: token, challengeSolution: solution))
        }
    }

    /// Signs in with the SMS code: `login(with: .phoneCode(phoneNumber:code:))`, the same six
    /// cases as an email link (a new number makes a new account, or joins the anonymous one).
    /// - Throws: `.invalidPhoneCode` (wrong, expired, used, superseded, or 5 tries spent),
    ///   `.migrationRequired`, `.credentialAlreadyInUse`, `.userDisabled`, `.phoneSignInDisabled`;
    ///   as `login(with:…)`.
    @discardableResult
    public func signIn(phoneNumber: String, code: String, allowMigration: Bool? = nil) async throws(PosternAuthError) -> LoginDescriptor {
        try await login(with: .phoneCode(phoneNumber: phoneNumber, code: code), allowMigration: allowMigration)
    }

    // MARK: Signing in

    /// Signs in with `credentials`, resolving the anonymous session on this device as API.md's
    /// table says: a new address goes to the anonymous account itself; an address with an account
    /// throws `.migrationRequired` until `allowMigration` is given (true: the app moves the
    /// anonymous account's data; false: it does not); a signed-in account links the address or
    /// reauthenticates.
    /// - Parameters:
    ///   - updateUserDisplayName: set as the display name after signing in.
    ///   - resetToAnonymousOnFailure: on any failure but `.migrationRequired`, sign out and start
    ///     a new anonymous session, so the app always has a user.
    /// - Throws: `.migrationRequired` (carrying the credentials and the anonymous uid),
    ///   `.credentialAlreadyInUse`, `.linkOtherSession` (a link this session did not ask for would
    ///   change its account), `.requiresRecentLogin` (linking an address to a signed-in account
    ///   needs a sign-in in the last 5 minutes), `.invalidCode`, `.expiredCode`, `.emailMismatch`,
    ///   `.invalidCodeVerifier` (type the address), `.invalidLoginCredentials`, `.userDisabled`,
    ///   `.tooManyAttempts`; for an identity provider's token (`.apple`, `.google`, `.provider`):
    ///   `.invalidProviderToken` (ask the provider for a new one), `.providerNotConfigured`,
    ///   `.accountExistsWithDifferentCredential` (sign in by email link, then `link(with:)`),
    ///   `.providerAlreadyLinked` (a signed-in account with another identity of that provider);
    ///   network and server failures.
    @discardableResult
    public func login(
        with credentials: Credentials, updateUserDisplayName: String? = nil, allowMigration: Bool? = nil,
        resetToAnonymousOnFailure: Bool = false
    ) async throws(PosternAuthError) -> LoginDescriptor {
        do {
            let anonymousUid = state.session?.isAnonymous == true ? state.session?.uid : nil
            let login = try await complete(credentials, allowMigration: allowMigration)
            adopt(login.session)
            if case .password(let email, _) = credentials { state.passwordEmails.insert(email.lowercased()) }
            switch credentials {
            case .emailLink, .approval: state.pendingLink = nil
            default: break
            }
            if let email = login.email { state.lastEmail = email }
            persist()
            if let name = updateUserDisplayName {
                try await updateProfile(displayName: .value(name))
            } else {
                try await reloadUser()
            }
            return LoginDescriptor(
                uid: login.uid, email: login.email, isNewUser: login.isNewUser,
                allowMigration: login.migration?.allowMigration, oldUserId: login.migration?.fromUid ?? anonymousUid,
                newUserId: login.migration?.toUid ?? login.uid)
        } catch {
            // A migration prompt is a question for the user, not a failure: the session stays.
            let isQuestion = if case .migrationRequired = error { true } else { false }
            if resetToAnonymousOnFailure, !isQuestion {
                await signOut()
                _ = try? await signInAnonymously()
            }
            throw error
        }
    }

    /// Reauthenticates the signed-in user before a sensitive action (a password or address
    /// change, deleting the account, linking a provider): a new session with a fresh sign-in
    /// time. `.apple`, `.google` and `.provider` reauthenticate with a provider linked to the
    /// account (RxFireAuth's `confirmAuthenticationWithApple`).
    /// - Throws: `.notSignedIn`; `.credentialAlreadyInUse` when `credentials` are another
    ///   account's; as `login(with:…)`.
    public func confirmAuthentication(with credentials: Credentials) async throws(PosternAuthError) {
        guard let session = state.session, !session.isAnonymous else { throw .notSignedIn }
        let login = try await complete(credentials, allowMigration: nil)
        guard login.uid == session.uid else { throw .credentialAlreadyInUse }
        adopt(login.session)
        if case .emailLink = credentials { state.pendingLink = nil; persist() }
    }

    /// Sends `credentials` to the server with the session on this device.
    private func complete(_ credentials: Credentials, allowMigration: Bool?) async throws(PosternAuthError) -> LoginBody {
        let token = state.session == nil ? nil : try? await idToken()
        switch credentials {
        case .password(let email, let password):
            return try await transport.send(
                "POST", "/v1/password/sign-in",
                body: PasswordSignInBody(email: email, password: password, idToken: token, allowMigration: allowMigration),
                credentials: credentials, as: LoginBody.self)
        case .emailCode(let email, let code):
            return try await transport.send(
                "POST", "/v1/email-link/complete",
                body: EmailLinkCompleteBody(code: code, email: email, idToken: token, allowMigration: allowMigration),
                credentials: credentials, as: LoginBody.self)
        case .emailLink(let text, let email):
            // This device's verifier: a link asked for here completes only with it; one asked for
            // on another device answers `.invalidCodeVerifier`, and the user types the code.
            let body = EmailLinkCompleteBody(
                link: text, email: email, codeVerifier: state.pendingLink?.codeVerifier, idToken: token, allowMigration: allowMigration)
            return try await transport.send("POST", "/v1/email-link/complete", body: body, credentials: credentials, as: LoginBody.self)
        case .phoneCode(let phoneNumber, let code):
            return try await transport.send(
                "POST", "/v1/phone/complete",
                body: PhoneSignInCompleteBody(phoneNumber: phoneNumber, code: code, idToken: token, allowMigration: allowMigration),
                credentials: credentials, as: LoginBody.self)
        case .apple, .google, .provider:
            guard let presented = credentials.providerToken else { throw .invalidArgument("These credentials are no provider's token.") }
            let body = ProviderSignInBody(
                provider: presented.provider, providerIdToken: presented.idToken, nonce: presented.nonce, idToken: token,
                allowMigration: allowMigration, displayName: presented.displayName)
            return try await transport.send("POST", "/v1/provider/sign-in", body: body, credentials: credentials, as: LoginBody.self)
        case .approval(let email):
            guard let verifier = state.pendingLink?.codeVerifier, state.pendingLink?.email == email else {
                throw .invalidArgument("No approval was asked for \(email) on this device.")
            }
            let body = EmailLinkWaitBody(email: email, codeVerifier: verifier, idToken: token, allowMigration: allowMigration)
            while true {
                if Task.isCancelled { throw .cancelled }
                let started = Date()
                // 200: approved (the session); 202: still waiting after this call's 25 s — or at
                // once, when the server has too many waiting: then the next call waits a second.
                let (data, status) = try await transport.exchange("POST", "/v1/email-link/wait", body: body, bearer: nil, credentials: credentials)
                if status == 200 { return try transport.decode(data, status: status, as: LoginBody.self) }
                if Date().timeIntervalSince(started) < 1 {
                    do { try await Task.sleep(nanoseconds: 1_000_000_000) } catch { throw .cancelled }
                }
            }
        }
    }

    // MARK: Approve on your other device

    /// "Approve on your other device": mails `email` a sign-in link whose page, on the other
    /// device, asks the owner to type the number this device shows. Show `number`, then call
    /// `login(with: .approval(email:))` (or `waitForApproval`) to wait. The 6-digit code in the
    /// same mail still works as the fallback (`.emailCode`).
    /// - Parameters:
    ///   - deviceName: how the page names this device; default: the app and the system.
    ///   - challengeSolution: as for `sendSignInLink(to:continueURL:locale:challengeSolution:)`.
    /// - Throws: `.invalidArgument` where the platform has no SHA-256 for PKCE; as `sendSignInLink`.
    public func requestApproval(
        for email: String, deviceName: String? = nil, continueURL: URL? = nil, locale: String? = nil, challengeSolution: String? = nil
    ) async throws(PosternAuthError) -> PendingApproval {
        guard let pkce = PKCE.make() else { throw .invalidArgument("An approval needs PKCE, and this platform offers no SHA-256.") }
        let token = state.session == nil ? nil : try? await idToken()
        let answer = try await solvingChallenge(challengeSolution) { solution throws(PosternAuthError) in
            try await transport.send(
                "POST", "/v1/email-link/send",
                body: EmailLinkSendBody(
                    email: email, continueUrl: continueURL?.absoluteString, locale: locale, codeChallenge: pkce.challenge, idToken: token,
                    approval: true, deviceName: deviceName ?? Self.defaultDeviceName, challengeSolution: solution),
                as: AcceptedBody.self)
        }
        guard let number = answer.approvalNumber else {
            throw .protocolMismatch(status: 202, code: "NO_APPROVAL_NUMBER", message: "The server did not start an approval.")
        }
        state.pendingLink = PendingLink(email: email, codeVerifier: pkce.verifier)
        state.lastEmail = email
        persist()
        return PendingApproval(email: email, number: number)
    }

    /// Waits until the owner approves `pending` on the other device, then signs in; see
    /// `login(with: .approval(email:))`.
    @discardableResult
    public func waitForApproval(_ pending: PendingApproval, allowMigration: Bool? = nil) async throws(PosternAuthError) -> LoginDescriptor {
        try await login(with: .approval(email: pending.email), allowMigration: allowMigration)
    }

    /// "AppName on macOS": how the approval page names this device when the app gives no name.
    static var defaultDeviceName: String {
        let app = (Bundle.main.object(forInfoDictionaryKey: "CFBundleDisplayName") as? String)
            ?? (Bundle.main.object(forInfoDictionaryKey: "CFBundleName") as? String) ?? ProcessInfo.processInfo.processName
        #if os(iOS)
        let system = "iOS"
        #elseif os(macOS)
        let system = "macOS"
        #elseif os(Linux)
        let system = "Linux"
        #else
        let system = "this device"
        #endif
        return String("\(app) on \(system)".prefix(64))
    }

    // MARK: Signing out

    /// Ends the session on the server (its refresh-token family is revoked) and on this device.
    /// The device forgets the session even when the server cannot be reached.
    public func signOut() async {
        guard let session = state.session else { return }
        endSession()
        try? await transport.send("POST", "/v1/sign-out", body: RefreshTokenBody(refreshToken: session.refreshToken))
    }
}
