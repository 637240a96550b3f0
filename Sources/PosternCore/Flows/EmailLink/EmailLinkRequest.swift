import Foundation

/// What `POST /v1/email-link/send` takes.
public struct EmailLinkRequest: Sendable {
    public var email: String
    public var continueURL: String?
    public var locale: String?
    /// PKCE S256 challenge: base64url(SHA-256(codeVerifier)).
    public var codeChallenge: String?
    public var idToken: String?
    /// "Approve on your other device": the asking device's name as the link's page shows it. Set,
    /// the request waits for the owner to pick the right number on the page (needs
    /// `codeChallenge`: the verifier is the waiting device's secret).
    public var approvalDevice: String?
    /// `bindBrowser`: the asking browser's `postern_browser` cookie. Set, the link is bound to
    /// that browser (the cookie is its PKCE verifier); not with `codeChallenge` or an approval.
    public var browserVerifier: String?
    /// The client's IP and the challenge's solution it sent (``ChallengeGate/check(solution:clientIP:)``).
    public var challengePass: ChallengePass

    public init(
        email: String, continueURL: String? = nil, locale: String? = nil, codeChallenge: String? = nil,
        idToken: String? = nil, approvalDevice: String? = nil, browserVerifier: String? = nil, challengePass: ChallengePass = .none
    ) {
        self.challengePass = challengePass
        self.email = email
        self.continueURL = continueURL
        self.locale = locale
        self.codeChallenge = codeChallenge
        self.idToken = idToken
        self.approvalDevice = approvalDevice
        self.browserVerifier = browserVerifier
    }
}

/// What `POST /v1/email-link/complete` takes.
public struct EmailLinkCompletion: Sendable {
    /// Any pasted text holding the link.
    public var link: String?
    public var oobCode: String?
    /// The 6 digits from the mail; needs `email`.
    public var code: String?
    public var email: String?
    public var codeVerifier: String?
    public var idToken: String?
    public var allowMigration: Bool?
    /// The presenting browser's `postern_browser` cookie, if it sent one: it completes a link
    /// bound to that browser (`bindBrowser`), and tells a re-click there "already signed in".
    public var browserVerifier: String?

    public init(
        link: String? = nil, oobCode: String? = nil, code: String? = nil, email: String? = nil,
        codeVerifier: String? = nil, idToken: String? = nil, allowMigration: Bool? = nil, browserVerifier: String? = nil
    ) {
        self.link = link
        self.oobCode = oobCode
        self.code = code
        self.email = email
        self.codeVerifier = codeVerifier
        self.idToken = idToken
        self.allowMigration = allowMigration
        self.browserVerifier = browserVerifier
    }
}
