/// `POST /v1/provider/sign-in`: an identity provider's ID token (Sign in with Apple, Google, or
/// another OpenID provider of `--identity-providers`), resolved as the email link's six cases.
public struct ProviderSignInBody: Sendable, Hashable, Codable {
    /// The provider's `id` in `--identity-providers`: `apple`, `google`, or the operator's name
    /// (`oidc:<id>` is accepted too).
    public var provider: String
    /// The ID token the provider gave the app.
    public var providerIdToken: String
    /// The raw nonce the app made (Apple's token carries its SHA-256; other providers the nonce
    /// itself). Required when the token carries a nonce.
    public var nonce: String?
    /// The session the app has (anonymous or signed in), for the six cases.
    public var idToken: String?
    /// As for the email link: the answer to MIGRATION_REQUIRED.
    public var allowMigration: Bool?
    /// A display name to set when the account has none (Apple gives the name to the app once,
    /// not in the token).
    public var displayName: String?

    public init(
        provider: String, providerIdToken: String, nonce: String? = nil, idToken: String? = nil, allowMigration: Bool? = nil,
        displayName: String? = nil
    ) {
        self.provider = provider
        self.providerIdToken = providerIdToken
        self.nonce = nonce
        self.idToken = idToken
        self.allowMigration = allowMigration
        self.displayName = displayName
    }
}

/// `POST /v1/me/providers`: links a provider's identity to the signed-in account (recent sign-in).
public struct LinkProviderBody: Sendable, Hashable, Codable {
    public var provider: String
    public var providerIdToken: String
    public var nonce: String?

    public init(provider: String, providerIdToken: String, nonce: String? = nil) {
        self.provider = provider
        self.providerIdToken = providerIdToken
        self.nonce = nonce
    }
}

extension JSONSchema {
    /// A provider's id as the requests name it.
    public static let providerName = JSONSchema.string(
        "The provider's id in --identity-providers: apple, google, or the operator's name (oidc:<id> accepted too).",
        pattern: "^(oidc:)?[a-z0-9_-]{1,32}$", minLength: 1, maxLength: 37)
    /// A provider's ID token.
    static let providerIDToken = JSONSchema.string(
        "The ID token the provider gave the app (a JWS, RS256 or ES256).", minLength: 1, maxLength: WireLimits.providerTokenMaximumLength)
    /// The raw nonce.
    static let providerNonce = JSONSchema.string(
        "The raw nonce the app made: Apple's token carries its SHA-256 in hex, others the nonce itself. Required when the token carries a nonce.",
        minLength: 1, maxLength: 256)
}

extension ProviderSignInBody: DocumentedBody {
    public static let schemaName = "ProviderSignInRequest"
    public static var schema: JSONSchema {
        .object("An identity provider's ID token (only for providers in --identity-providers).", [
            .required("provider", .providerName),
            .required("providerIdToken", .providerIDToken),
            .optional("nonce", .providerNonce),
            .optional("idToken", .idToken),
            .optional("allowMigration", .boolean("As for the email link: the answer to MIGRATION_REQUIRED.")),
            .optional("displayName", .displayName),
        ])
    }
    public static var example: Self {
        Self(
            provider: "apple", providerIdToken: "eyJhbGciOiJSUzI1NiIsImtpZCI6IlcifQ.e30.sig", nonce: "n-0S6_WzA2Mj",
            idToken: "eyJhbGciOiJFUzI1NiJ9.e30.sig", allowMigration: true, displayName: "Ada Lovelace")
    }
}

extension LinkProviderBody: DocumentedBody {
    public static let schemaName = "LinkProviderRequest"
    public static var schema: JSONSchema {
        .object("A provider's ID token to link to the signed-in account.", [
            .required("provider", .providerName),
            .required("providerIdToken", .providerIDToken),
            .optional("nonce", .providerNonce),
        ])
    }
    public static var example: Self { Self(provider: "google", providerIdToken: "eyJhbGciOiJSUzI1NiIsImtpZCI6IlcifQ.e30.sig", nonce: "n-1") }
}

/// `POST /v1/provider/apple/notifications`: Apple's server-to-server notification, as Apple posts it.
public struct AppleNotificationBody: Sendable, Hashable, Codable {
    /// A JWS signed by Apple (its ID-token keys) whose `events` say what happened.
    public var payload: String

    public init(payload: String) { self.payload = payload }
}

/// The answer to Apple's notification: it was checked and applied (or had nothing to change).
public struct NotificationAcceptedBody: Sendable, Hashable, Codable {
    public var status: String

    public init(status: String = "accepted") { self.status = status }
}

extension AppleNotificationBody: DocumentedBody {
    public static let schemaName = "AppleNotificationRequest"
    public static var schema: JSONSchema {
        .object("Apple's server-to-server notification (the apple provider's audiences; Apple's keys).", [
            .required("payload", .string("A JWS signed by Apple: iss, aud, iat, jti and events (a JSON string: type, sub, event_time).", minLength: 1, maxLength: WireLimits.providerTokenMaximumLength)),
        ])
    }
    public static var example: Self { Self(payload: "eyJraWQiOiJXNldjT0tCIiwiYWxnIjoiUlMyNTYifQ.e30.sig") }
}

extension NotificationAcceptedBody: DocumentedBody {
    public static let schemaName = "NotificationAccepted"
    public static var schema: JSONSchema {
        .object("The notification was checked and applied.", [.required("status", .oneOf(["accepted"]))])
    }
    public static var example: Self { Self() }
}
