/// A link made for an operator or a script (`POST /v1/admin/links`, `postern send-link`).
public struct IssuedLink: Sendable, Hashable {
    public var link: String
    /// The code inside the link: a secret.
    public var oobCode: String
    public var expiresAt: Int64
    /// The mail was queued; `messageID` is its outbox id.
    public var queued: Bool
    public var messageID: Int64?
}

extension AuthService {
    /// The actions an operator may make links for, by their command-line names.
    public static let issuableActions = ["sign-in", "reset-password", "verify-email"]

    /// Makes a link for `email` and, when `queue`, queues the mail that carries it. Unlike the
    /// public endpoints this is for operators: it tells whether the account exists
    /// (`USER_NOT_FOUND` for a reset or verification of an unknown address) and has no limits.
    /// - Throws: `AuthError.invalidArgument` for an unknown action, `invalidEmail`, `userNotFound`.
    public func issueLink(
        action: String, email: String, continueURL: String?, locale: String?, queue: Bool
    ) throws(AuthError) -> IssuedLink {
        let purpose: ActionRequest.Purpose
        switch action {
        case "sign-in", "signIn": purpose = .signIn
        case "reset-password", "resetPassword": purpose = .resetPassword
        case "verify-email", "verifyEmail": purpose = .verifyEmail
        default: throw .invalidArgument("action must be one of \(Self.issuableActions.joined(separator: ", ")).")
        }
        let address = try parseEmail(email)
        let continueURL = try checkContinueURL(continueURL)
        let now = clock.unixSeconds()
        let ring = keys.current
        let id = try Self.newRequestID(at: clock.now())
        let lifetime = config.lifetime(purpose)
        let cleanLocale = locale.flatMap(Self.cleanLocale)
        let issued = try write { tx -> IssuedLink in
            let holder = try tx.account(address: address)
            if purpose != .signIn, holder == nil { throw AuthError.userNotFound }
            var request = ActionRequest(
                id: id, purpose: purpose, email: address, uid: purpose == .signIn ? nil : holder?.uid,
                continueURL: continueURL, locale: cleanLocale ?? holder?.locale, createdAt: now, expiresAt: now + lifetime)
            if purpose == .signIn { request.sixDigitKeyID = ring.actionCodes.activeKeyID }
            try tx.insertActionRequest(request)
            guard let (link, code) = try self.mintLink(for: request, ring: ring, now: now, tx: tx) else {
                throw AuthError.userNotFound
            }
            var messageID: Int64?
            if queue {
                let intent: MailIntent = switch purpose {
                case .signIn: .signIn(requestID: id)
                case .resetPassword: .resetPassword(requestID: id)
                default: .verifyEmail(requestID: id)
                }
                messageID = try tx.enqueue(intent, recipient: address, now: now, giveUpAt: request.expiresAt)
            }
            return IssuedLink(link: link, oobCode: code, expiresAt: request.expiresAt, queued: queue, messageID: messageID)
        }
        metrics.requested(purpose.action)
        if queue { mailQueued() }
        return issued
    }

    /// The 6-digit code to show on the hosted sign-in page to whoever holds a valid sign-in link
    /// (for typing on another device); nil when the link is not a mailed sign-in link.
    public func sixDigitCode(forSignInCode text: String) -> String? {
        let ring = keys.current
        let now = clock.unixSeconds()
        return try? read { tx in
            let (_, request) = try self.verifiedRequest(text, expecting: .signIn, ring: ring, now: now, tx: tx)
            // A PKCE link's page never shows the code: the person has it in the mail, and the
            // link alone (leaked, intercepted) must not be enough to sign in.
            guard request.codeChallenge == nil, let keyID = request.sixDigitKeyID else { return nil }
            return Self.sixDigitCode(requestID: request.id, keyID: keyID, ring: ring)
        }
    }
}
