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
