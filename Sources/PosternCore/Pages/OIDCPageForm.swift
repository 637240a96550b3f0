/// The hidden fields of every OIDC page's form: the pending authorization request and the CSRF token.
public struct OIDCPageForm: Sendable, Hashable {
    /// The pending authorization request's id (the logout confirmation: its state token).
    public var request: String
    /// The CSRF token for this browser and request.
    public var csrf: String

    /// A form for `request` with the token `csrf`.
    public init(request: String, csrf: String) {
        self.request = request
        self.csrf = csrf
    }
}

/// Why the OIDC sign-in page is shown again: the line above its form.
public enum OIDCSignInRetry: Sendable, Hashable {
    /// The address and password do not match (the same words whether the account exists or not).
    case wrongPassword
    /// What was typed is not an email address.
    case badAddress
}

/// Why the provider shows an error on its own page instead of redirecting (each has words in
/// every language of the bundled templates).
public enum OIDCPageRefusal: Sendable, Hashable {
    /// `client_id` missing, repeated or not registered.
    case unknownClient
    /// `redirect_uri` not registered for the client.
    case badRedirectURI
    /// The pending request is unknown or expired: start again from the application.
    case requestExpired
    /// The request or link belongs to another browser: type the 6-digit code in the browser
    /// where the sign-in started.
    case otherBrowser
    /// The form's token does not match (CSRF).
    case form
    /// Rate limited: try later.
    case tooManyAttempts
    /// Server trouble.
    case unavailable
}
