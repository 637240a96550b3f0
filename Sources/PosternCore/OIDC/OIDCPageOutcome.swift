/// Why the provider shows an error on its own page instead of redirecting to the client (each has
/// words in every language of the hosted pages).
public enum OIDCPageRefusal: Error, Sendable, Hashable {
    /// `client_id` missing, repeated or not registered.
    case unknownClient
    /// `redirect_uri` not registered for the client.
    case badRedirectURI
    /// The pending request is unknown or expired: start again from the application.
    case requestExpired
    /// The request or the link belongs to another browser: type the 6-digit code in the browser
    /// where the sign-in began.
    case otherBrowser
    /// The form's token does not match this browser (CSRF).
    case form
    /// Too many tries from here: try later.
    case tooManyAttempts
    /// The server is in trouble.
    case unavailable
}

/// Why the sign-in page is shown again.
public enum OIDCSignInRetry: Sendable, Hashable {
    /// The address and password do not match (or the account is disabled: the same words).
    case wrongPassword
    /// What was typed is not an email address.
    case badAddress
    /// The approval on the other device ended before it was given: a wrong number was typed
    /// there, or it expired, or it was used. Ask again, or have a link sent.
    case approvalEnded
    /// The identity provider's sign-in did not complete: cancelled there, refused, or its token
    /// did not pass the checks. Try again, or use the address.
    case providerFailed
    /// The provider's address has an account this identity may not join yet (the pre-hijacking
    /// rule): sign in with the address first, then link the provider in the app.
    case accountExists
    /// The request needs a solved challenge first (``ChallengeGate``): the page shows it, then
    /// the form is sent again with its solution.
    case challenge
    /// The operator's hook refused the sign-in (`HOOK_DENIED`): its message is shown (plain
    /// text, escaped as every value of a page).
    case hookDenied(message: String)
}

/// An authorization request waiting on the hosted page, as its pages show it.
public struct OIDCPending: Sendable, Hashable {
    /// The request's id: every form's hidden `request`.
    public let id: String
    /// The client's name, for the headings.
    public let clientName: String
    /// The scopes asked for, for the consent screen.
    public let scopes: [String]
    /// Prefills the address field (`login_hint`).
    public let loginHint: String?
    /// The client's preferred languages (`ui_locales`), in order.
    public let uiLocales: [String]

    public init(id: String, clientName: String, scopes: [String], loginHint: String?, uiLocales: [String]) {
        self.id = id
        self.clientName = clientName
        self.scopes = scopes
        self.loginHint = loginHint
        self.uiLocales = uiLocales
    }
}

/// What a step of the hosted sign-in comes to: a page, or a redirect to the client.
public enum OIDCPageOutcome: Sendable, Hashable {
    /// Postern's own error page; never a redirect (the client or its redirect URI is not trusted).
    case refused(OIDCPageRefusal)
    /// `302` to this URL: the client's redirect URI with `code` or `error`, `state` and `iss`.
    case redirect(String)
    /// The address field (and the password form), perhaps saying why again.
    case signIn(OIDCPending, retry: OIDCSignInRetry?)
    /// "Check your mail", with the 6-digit code's field; `retry`: the last code was wrong.
    case checkMail(OIDCPending, email: String, retry: Bool)
    /// "Approve on your other device": the same page for every address, showing `number` to type
    /// on the other device's page (`waiting`: Continue was pressed before it was typed there).
    case approve(OIDCPending, email: String, number: Int, waiting: Bool)
    /// "If the address has an account with a password, a reset link is on its way."
    case forgotSent(OIDCPending, email: String)
    /// The consent screen for the signed-in `email`.
    case consent(OIDCPending, email: String)
}

/// A hosted-page step's answer: the outcome, and the browser session it started, if any.
public struct OIDCPageAnswer: Sendable, Hashable {
    public var outcome: OIDCPageOutcome
    /// The new browser session's cookie value when this step signed someone in (a new one at every
    /// sign-in); nil otherwise.
    public var newSession: String?

    public init(_ outcome: OIDCPageOutcome, newSession: String? = nil) {
        self.outcome = outcome
        self.newSession = newSession
    }
}
