/// The schemas of the fields several bodies share: one description of each, with the limits of
/// `WireLimits`.
extension JSONSchema {
    /// An email address as the flows accept it (IDN domains are encoded, the local part kept).
    public static let emailAddress = JSONSchema.string(format: "email", maxLength: WireLimits.emailMaximumLength)

    /// A new password: the policy's lengths (the address itself or its local part is refused too).
    public static let newPassword = JSONSchema.string(
        "At least \(WireLimits.passwordMinimumLength) and at most \(WireLimits.passwordMaximumLength) code points; not the address or its part before the @.",
        minLength: WireLimits.passwordMinimumLength, maxLength: WireLimits.passwordMaximumLength)

    /// Where the app continues after the action; the daemon allows only its own origin and those
    /// of `--allowed-continue-hosts`, without `mode`, `oobCode`, `apiKey` or `lang` parameters.
    /// (Not `format: uri`: an empty one means none, as absent and null do.)
    public static let continueURL = JSONSchema.string(
        "An absolute http(s) URL on the public URL's origin or an allowed host's; no user info, no mode/oobCode/apiKey/lang parameters. Empty means none.",
        maxLength: 8192
    ).refined(.continueURL)

    /// A language tag; one that is malformed or has no templates falls back to English.
    public static let locale = JSONSchema.string("A BCP 47 language tag (`en`, `pt-BR`); anything else means `en`.")

    /// PKCE S256: base64url(SHA-256(codeVerifier)), unpadded.
    public static let codeChallenge = JSONSchema.string(
        "PKCE S256: base64url(SHA-256(codeVerifier)) without padding (43 characters).",
        pattern: "^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$")

    /// The challenge's solution a request that sends mail or SMS may carry.
    public static let challengeSolution = JSONSchema.string(
        "Only when the service answered CHALLENGE_REQUIRED: the ALTCHA payload (base64 of its JSON) of a proof of work from GET /v1/challenge, or the CAPTCHA widget's token. Each solution is accepted once; an empty string is no solution (as a form's empty field).",
        maxLength: WireLimits.challengeSolutionMaximumLength)

    /// An ID token (ES256 JWT) presented in a body.
    public static let idToken = JSONSchema.string("An ID token (ES256 JWT, verifiable with /.well-known/jwks.json).")

    /// An opaque refresh token.
    public static let refreshToken = JSONSchema.string("An opaque refresh token; rotated on every use.")

    /// A user id.
    public static let uid = JSONSchema.string("A user id (base64url).")

    /// A UTC time in ISO 8601 (`2025-01-31T12:00:00Z`).
    public static let timestamp = JSONSchema.string(format: "date-time")

    /// The code of an action link (a secret).
    public static let oobCode = JSONSchema.string("The oobCode of an action link. Empty means absent.")

    /// Pasted text holding an action link: the bare URL, a whole mail, a gateway-wrapped link.
    public static let pastedLink = JSONSchema.string(
        "Any pasted text holding the action link: the URL, a whole mail, a link rewritten by a mail gateway. Empty means absent.")

    /// The mode of an action link.
    public static let actionMode = JSONSchema.string("`signIn`, `resetPassword`, `verifyEmail`, `verifyAndChangeEmail` or `recoverEmail`.")

    /// One line of text for a person's name.
    public static let displayName = JSONSchema.string(
        "One line of at most \(WireLimits.displayNameMaximumLength) code points, without control characters.",
        pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029]*$", maxLength: WireLimits.displayNameMaximumLength)

    /// The app-owned JSON object of a user.
    public static let attributes = JSONSchema.anyObject(
        "A JSON object the app owns (profile fields such as a bio): at most \(WireLimits.attributesMaximumBytes) bytes as compact JSON.")

    /// An object that requires `names`, each a non-empty string: one way of naming a credential in
    /// an `anyOf` (a field given as "" counts as absent).
    static func naming(_ names: String...) -> JSONSchema {
        .object(names.map { Property.required($0, .string(minLength: 1)) })
    }
}
