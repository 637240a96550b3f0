import PosternAPI
import PosternCrypto

/// The OpenID Provider's metadata (Discovery 1.0 §3, RFC 8414), served at
/// `/.well-known/openid-configuration`: a pure function of the issuer, so that every daemon of a
/// deployment serves the same document.
public enum OIDCDiscovery {
    /// Where each endpoint lives, relative to the issuer.
    public enum Path {
        public static let discovery = "/.well-known/openid-configuration"
        public static let jwks = "/.well-known/jwks.json"
        public static let authorization = "/oidc/authorize"
        public static let token = "/oidc/token"
        public static let userinfo = "/oidc/userinfo"
        public static let revocation = "/oidc/revoke"
        public static let endSession = "/oidc/logout"
        /// The hosted page's steps (forms post here; not in the metadata).
        public static let signIn = "/oidc/sign-in"
        public static let code = "/oidc/code"
        public static let password = "/oidc/password"
        public static let forgot = "/oidc/forgot"
        public static let restart = "/oidc/restart"
        public static let consent = "/oidc/consent"
        /// Approve on another device: asks, and shows the number to type there.
        public static let approve = "/oidc/approve"
        /// Continue, once the number was typed on the other device.
        public static let approved = "/oidc/approved"
        /// Where a sign-in link sent by the hosted page continues (`?request=ID`).
        public static let resume = "/oidc/resume"
        /// "Continue with Apple / Google / …": the button's form posts here, answered by a redirect to the provider.
        public static let providerStart = "/oidc/provider-start"
        /// The identity providers' redirect URI (GET, and POST for Apple's form_post).
        public static let providerCallback = "/oidc/provider-callback"
    }

    /// The metadata for `issuer` (`--public-url`, used exactly as given: Discovery §4.3 requires
    /// the `issuer` a relying party fetched it under to be the one in the document and in every
    /// ID token).
    public static func document(issuer: String) -> JSONValue {
        func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
        return .object([
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + Path.authorization),
            "token_endpoint": .string(issuer + Path.token),
            "userinfo_endpoint": .string(issuer + Path.userinfo),
            "revocation_endpoint": .string(issuer + Path.revocation),
            "end_session_endpoint": .string(issuer + Path.endSession),
            "jwks_uri": .string(issuer + Path.jwks),
            "response_types_supported": strings(["code"]),
            "response_modes_supported": strings(["query"]),
            "grant_types_supported": strings(["authorization_code", "refresh_token"]),
            "subject_types_supported": strings(["public"]),
            // RS256 is mandatory (Core §15.1, Discovery §3); a client is registered for one of them.
            "id_token_signing_alg_values_supported": strings(JSONWebToken.Algorithm.allCases.map(\.rawValue)),
            "scopes_supported": strings(OIDCClient.knownScopes),
            "claims_supported": strings(["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "azp", "email", "email_verified", "name"]),
            "code_challenge_methods_supported": strings(["S256"]),
            "token_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post", "none"]),
            "revocation_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post", "none"]),
            "prompt_values_supported": strings(["none", "login", "consent"]),
            "ui_locales_supported": strings(["en", "de"]),
            "claims_parameter_supported": .bool(false),
            "request_parameter_supported": .bool(false),
            "request_uri_parameter_supported": .bool(false),
            "authorization_response_iss_parameter_supported": .bool(true),
        ])
    }
}
