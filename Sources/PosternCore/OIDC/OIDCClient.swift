import PosternAPI
import PosternCrypto

/// A relying party registered with the OpenID Connect provider (`postern oidc clients add`,
/// `POST /v1/admin/oidc/clients`; the store's `oidc_clients`). Holds no secret: a confidential
/// client's secret only as its SHA-256.
public struct OIDCClient: Sendable, Hashable {
    /// How the client proves itself at the token endpoint.
    public enum Authentication: Sendable, Hashable {
        /// A confidential client: `client_secret_basic` or `client_secret_post` with the secret
        /// whose SHA-256 this is.
        case secretHash([UInt8])
        /// A public client (a native app, a single-page app): PKCE alone.
        case publicClient
    }

    /// The scopes a client may be allowed.
    public static let knownScopes = OIDCClientRequestBody.knownScopes
    /// What a client that names no `scopes` may ask for.
    public static let defaultScopes = ["openid", "email", "profile"]

    /// `client_id`: 1–128 of `A-Z a-z 0-9 . _ ~ -`.
    public let clientID: String
    /// The name the consent screen shows.
    public let name: String
    /// Secret or public.
    public let authentication: Authentication
    /// The redirect URIs, compared exactly (``redirectURIMatches(_:)``).
    public let redirectURIs: [String]
    /// Where RP-initiated logout may send the browser back to, compared exactly.
    public let postLogoutRedirectURIs: [String]
    /// The scopes it may ask for, in the order registered.
    public let scopes: [String]
    /// No consent screen.
    public let firstParty: Bool
    /// May leave out PKCE (confidential clients only); must send `nonce` then.
    public let allowNoPKCE: Bool
    /// The JWS algorithm of its ID tokens and access tokens (OpenID Connect Registration's
    /// `id_token_signed_response_alg`): ES256 by default, RS256 for a relying party that takes
    /// nothing else.
    public let idTokenSignedResponseAlg: JSONWebToken.Algorithm
    /// When it was registered, seconds since 1970.
    public let createdAt: Int64

    /// A client as registered, already checked (``OIDCClientRegistration/validated()`` checks).
    public init(
        clientID: String, name: String, authentication: Authentication, redirectURIs: [String],
        postLogoutRedirectURIs: [String] = [], scopes: [String] = OIDCClient.defaultScopes, firstParty: Bool = false,
        allowNoPKCE: Bool = false, idTokenSignedResponseAlg: JSONWebToken.Algorithm = .es256, createdAt: Int64 = 0
    ) {
        self.clientID = clientID
        self.name = name
        self.authentication = authentication
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
        self.firstParty = firstParty
        self.allowNoPKCE = allowNoPKCE
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.createdAt = createdAt
    }

    /// Whether it authenticates with PKCE alone.
    public var isPublic: Bool { authentication == .publicClient }

    /// What the store keeps of a confidential client's `secret`: its SHA-256 (a fast hash is
    /// enough for 32 random bytes, and keeps a slow one off every token request).
    public static func secretHash(of secret: String) -> [UInt8] { SHA256.hash(Array(secret.utf8)) }

    /// Whether `secret` is this client's, in time independent of where it differs; false for a
    /// public client.
    public func acceptsSecret(_ secret: String) -> Bool {
        guard case .secretHash(let expected) = authentication else { return false }
        return ConstantTime.equals(Self.secretHash(of: secret), expected)
    }

    /// Whether `uri`, from an authorization or token request, is one of the registered redirect
    /// URIs: byte for byte, no normalization (RFC 9700 §4.1.3), except that a registered loopback
    /// URI (`http://127.0.0.1/…`, `http://[::1]/…`) matches on any port (RFC 8252 §7.3).
    public func redirectURIMatches(_ uri: String) -> Bool { Self.matches(uri, in: redirectURIs) }

    /// Whether `uri` is one of the registered post-logout redirect URIs, by the same rule.
    public func postLogoutRedirectURIMatches(_ uri: String) -> Bool { Self.matches(uri, in: postLogoutRedirectURIs) }

    static func matches(_ uri: String, in registered: [String]) -> Bool {
        if registered.contains(uri) { return true }
        guard let presented = LoopbackURI(uri) else { return false }
        return registered.contains { LoopbackURI($0)?.withoutPort == presented.withoutPort }
    }
}

/// A loopback redirect URI split at its port: `http://127.0.0.1:PORT/rest` or `http://[::1]:PORT/rest`.
struct LoopbackURI {
    /// The URI with its port left out.
    let withoutPort: String

    init?(_ uri: String) {
        for host in ["http://127.0.0.1", "http://[::1]"] where uri.hasPrefix(host) {
            var rest = Substring(uri.dropFirst(host.count))
            if rest.first == ":" {
                let digits = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
                guard !digits.isEmpty, digits.count <= 5, let port = Int(digits), port <= 65_535 else { return nil }
                rest = rest.dropFirst(1 + digits.count)
            }
            guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return nil }
            withoutPort = host + rest
            return
        }
        return nil
    }
}
