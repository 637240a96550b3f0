/// A registered OpenID Connect client as operators see it (never its secret):
/// `GET /v1/admin/oidc/clients`, `postern oidc clients list --json`.
public struct OIDCClientBody: Sendable, Hashable, Codable {
    public var clientId: String
    public var name: String
    public var redirectUris: [String]
    public var postLogoutRedirectUris: [String]
    public var `public`: Bool
    public var firstParty: Bool
    public var allowNoPkce: Bool
    public var scopes: [String]
    /// `ES256` or `RS256`: the JWS algorithm of its ID tokens and access tokens.
    public var idTokenSignedResponseAlg: String
    public var createdAt: String

    public init(
        clientId: String, name: String, redirectUris: [String], postLogoutRedirectUris: [String], public isPublic: Bool, firstParty: Bool,
        allowNoPkce: Bool, scopes: [String], idTokenSignedResponseAlg: String = "ES256", createdAt: String
    ) {
        self.clientId = clientId
        self.name = name
        self.redirectUris = redirectUris
        self.postLogoutRedirectUris = postLogoutRedirectUris
        self.public = isPublic
        self.firstParty = firstParty
        self.allowNoPkce = allowNoPkce
        self.scopes = scopes
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.createdAt = createdAt
    }
}

/// Every registered client.
public struct OIDCClientListBody: Sendable, Hashable, Codable {
    public var clients: [OIDCClientBody]
    public init(clients: [OIDCClientBody]) { self.clients = clients }
}

/// A client just registered or given a new secret, and that secret: shown this once.
public struct OIDCClientSecretBody: Sendable, Hashable, Codable {
    public var client: OIDCClientBody
    /// 43 characters, base64url; absent for a public client.
    public var clientSecret: String?
    public init(client: OIDCClientBody, clientSecret: String?) {
        self.client = client
        self.clientSecret = clientSecret
    }
}

extension OIDCClientBody: DocumentedBody {
    public static let schemaName = "OIDCClient"
    public static var schema: JSONSchema {
        .object("A registered OpenID Connect client (never its secret).", [
            .required("clientId", .string("Its client_id: 16 random bytes, base64url (22 characters).")),
            .required("name", .string("What the consent screen shows.")),
            .required("redirectUris", .array(.string(), "Compared byte for byte (a loopback one on any port).")),
            .required("postLogoutRedirectUris", .array(.string())),
            .required("public", .boolean("PKCE alone, no secret.")),
            .required("firstParty", .boolean("No consent screen.")),
            .required("allowNoPkce", .boolean("May leave out PKCE (then must send a nonce).")),
            .required("scopes", .array(.oneOf(OIDCClientRequestBody.knownScopes))),
            .required("idTokenSignedResponseAlg", .oneOf(OIDCClientRequestBody.signingAlgorithms, "The JWS algorithm of its ID tokens and access tokens.")),
            .required("createdAt", .timestamp),
        ])
    }
    public static var example: Self {
        Self(
            clientId: "Q2xpZW50SWRFeGFtcGxlMQ", name: "Grafana", redirectUris: ["https://grafana.example.com/login/generic_oauth"],
            postLogoutRedirectUris: ["https://grafana.example.com/login"], public: false, firstParty: true, allowNoPkce: false,
            scopes: ["openid", "email", "profile", "offline_access"], idTokenSignedResponseAlg: "ES256", createdAt: JSONSchema.Example.timestamp)
    }
}

extension OIDCClientListBody: DocumentedBody {
    public static let schemaName = "OIDCClientList"
    public static var schema: JSONSchema {
        .object("The registered clients, oldest first.", [.required("clients", .array(.body(OIDCClientBody.self)))])
    }
    public static var example: Self { Self(clients: [.example]) }
    public static var referencedBodies: [any DocumentedBody.Type] { [OIDCClientBody.self] }
}

extension OIDCClientSecretBody: DocumentedBody {
    public static let schemaName = "OIDCClientSecret"
    public static var schema: JSONSchema {
        .object("The client and its new secret, shown this once (stored only as its SHA-256).", [
            .required("client", .body(OIDCClientBody.self)),
            .optional("clientSecret", .string(
                "For client_secret_basic or client_secret_post: 32 random bytes, base64url. Absent for a public client.",
                pattern: "^[A-Za-z0-9_-]{43}$")),
        ])
    }
    public static var example: Self { Self(client: .example, clientSecret: "c2VjcmV0LWV4YW1wbGUtZG8tbm90LXVzZS0wMTIzNDU") }
    public static var referencedBodies: [any DocumentedBody.Type] { [OIDCClientBody.self] }
}
