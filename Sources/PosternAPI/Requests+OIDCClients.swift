/// `POST /v1/admin/oidc/clients`: register an OpenID Connect relying party. Postern makes its id
/// and (a confidential client) its secret.
public struct OIDCClientRequestBody: Sendable, Hashable, Codable {
    /// The scopes a client may be allowed: the one list, which the core's `OIDCClient.knownScopes` is.
    public static let knownScopes = ["openid", "email", "profile", "offline_access"]
    /// The longest redirect URI the core registers (`OIDCClientRegistration.maximumURILength`).
    public static let uriMaximumLength = 2_000
    /// The JWS algorithms a client's tokens may be signed with (the core's `JSONWebToken.Algorithm`).
    public static let signingAlgorithms = ["ES256", "RS256"]

    /// What the consent screen shows.
    public var name: String
    public var redirectUris: [String]
    /// A public client (native app, single-page app): PKCE alone, no secret. Default false.
    public var `public`: Bool?
    /// No consent screen. Default false.
    public var firstParty: Bool?
    public var postLogoutRedirectUris: [String]?
    /// May leave out PKCE (confidential clients only). Default false.
    public var allowNoPkce: Bool?
    /// Default `openid email profile`.
    public var scopes: [String]?
    /// The JWS algorithm of its ID tokens and access tokens: `ES256` (the default) or `RS256`.
    public var idTokenSignedResponseAlg: String?

    public init(
        name: String, redirectUris: [String], public isPublic: Bool? = nil, firstParty: Bool? = nil, postLogoutRedirectUris: [String]? = nil,
        allowNoPkce: Bool? = nil, scopes: [String]? = nil, idTokenSignedResponseAlg: String? = nil
    ) {
        self.name = name
        self.redirectUris = redirectUris
        self.public = isPublic
        self.firstParty = firstParty
        self.postLogoutRedirectUris = postLogoutRedirectUris
        self.allowNoPkce = allowNoPkce
        self.scopes = scopes
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
    }
}

extension OIDCClientRequestBody: DocumentedBody {
    public static let schemaName = "OIDCClientRequest"
    public static var schema: JSONSchema {
        let uri = JSONSchema.string(
            "An absolute URI without fragment or user information, compared byte for byte: https; http only on 127.0.0.1 or [::1] (any port matches; localhost is refused); or, for a public client, a private-use scheme with a dot (com.example.app:/callback). At most 50.",
            maxLength: uriMaximumLength)
        return .object("A relying party to register; a bad field is 400 INVALID_ARGUMENT naming it (`redirectUris[1]: …`).", [
            .required("name", .string("What the consent screen shows: one line (no control character).", pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F]+$", minLength: 1, maxLength: 256)),
            .required("redirectUris", .array(uri, "Where the authorization response may go: at least one.", minItems: 1)),
            .optional("public", .boolean("A public client (PKCE alone, no secret). Default false.")),
            .optional("firstParty", .boolean("No consent screen. Default false.")),
            .optional("postLogoutRedirectUris", .array(uri, "Where RP-initiated logout may return to; the redirect URIs' rules.")),
            .optional("allowNoPkce", .boolean("May leave out PKCE, then must send a nonce: confidential clients only. Default false.")),
            .optional("scopes", .array(.oneOf(knownScopes), "What it may ask for; openid is added when missing. Default openid email profile.")),
            .optional("idTokenSignedResponseAlg", .oneOf(
                signingAlgorithms, "The JWS algorithm of its ID tokens and access tokens: RS256 for a relying party that takes nothing else. Default ES256.")),
        ])
    }
    public static var example: Self {
        Self(
            name: "Grafana", redirectUris: ["https://grafana.example.com/login/generic_oauth"], public: false, firstParty: true,
            postLogoutRedirectUris: ["https://grafana.example.com/login"], allowNoPkce: false,
            scopes: ["openid", "email", "profile", "offline_access"], idTokenSignedResponseAlg: "ES256")
    }
}
