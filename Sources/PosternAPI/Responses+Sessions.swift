/// One session of `GET /v1/me/sessions` (and the admin's `GET /v1/admin/users/{uid}/sessions`):
/// a sign-in and its refreshes, by device and coarse network, never a token or a full address.
public struct DeviceSessionBody: Sendable, Hashable, Codable {
    /// The session's public id: `DELETE /v1/me/sessions/{id}` revokes it.
    public var id: String
    /// "Chrome on Linux"; absent when nothing said.
    public var deviceName: String?
    /// The /24 (IPv4) or /48 (IPv6) it signed in from; absent when unknown.
    public var network: String?
    /// How it signed in (`password`, `emailLink`, `anonymous`, `phone`, `provider:…`, `oidc:…`).
    public var method: String
    /// The OpenID Connect client it was issued to; absent for the API's own sessions.
    public var clientId: String?
    public var createdAt: String
    public var lastUsedAt: String
    /// The session of the ID token that asked.
    public var current: Bool

    public init(
        id: String, deviceName: String?, network: String?, method: String, clientId: String?, createdAt: String, lastUsedAt: String,
        current: Bool
    ) {
        self.id = id
        self.deviceName = deviceName
        self.network = network
        self.method = method
        self.clientId = clientId
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.current = current
    }
}

/// `GET /v1/me/sessions`: the account's live sessions, newest first.
public struct DeviceSessionListBody: Sendable, Hashable, Codable {
    public var sessions: [DeviceSessionBody]

    public init(sessions: [DeviceSessionBody]) { self.sessions = sessions }
}

/// One line of `GET /v1/me/activity`: what happened to the account and when.
public struct ActivityEntryBody: Sendable, Hashable, Codable {
    public var at: String
    /// `signIn`, `accountCreated`, `passwordChanged`, `passwordReset`, `emailChanged`, `emailVerified`,
    /// `emailRecovered`, `anonymousUpgraded`, `phoneLinked`, `phoneRemoved` or `sessionRevoked`.
    public var kind: String
    /// A sign-in's method, or a revocation's reason.
    public var method: String?
    /// A sign-in's device.
    public var deviceName: String?
    /// A sign-in's /24 or /48.
    public var network: String?

    public init(at: String, kind: String, method: String?, deviceName: String?, network: String?) {
        self.at = at
        self.kind = kind
        self.method = method
        self.deviceName = deviceName
        self.network = network
    }

    /// Every kind, as `kind` names them.
    public static let kinds = [
        "signIn", "accountCreated", "passwordChanged", "passwordReset", "emailChanged", "emailVerified", "emailRecovered",
        "anonymousUpgraded", "phoneLinked", "phoneRemoved", "sessionRevoked",
    ]
}

/// A page of `GET /v1/me/activity`: newest first, and the cursor of the next page.
public struct ActivityListBody: Sendable, Hashable, Codable {
    public var activity: [ActivityEntryBody]
    /// The `cursor` of the next page; null on the last.
    public var nextCursor: String?

    public init(activity: [ActivityEntryBody], nextCursor: String?) {
        self.activity = activity
        self.nextCursor = nextCursor
    }

    private enum CodingKeys: String, CodingKey { case activity, nextCursor }

    /// Writes `nextCursor` as null on the last page (not absent), as the route promises.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(activity, forKey: .activity)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

extension DeviceSessionBody: DocumentedBody {
    public static let schemaName = "DeviceSession"
    public static var schema: JSONSchema {
        .object("A session: one sign-in and its refreshes, by device and coarse network (never a token, never a full address).", [
            .required("id", .string("The session's public id (the ID token's `sid`).")),
            .optional("deviceName", .string("The device, as its User-Agent names it (\"Chrome on Linux\"), or the name an approval gave.")),
            .optional("network", .string("The /24 (IPv4) or /48 (IPv6) it signed in from.")),
            .required("method", .string("How it signed in: `password`, `emailLink`, `anonymous`, `phone`, `provider:<name>`, or an OpenID Connect client's grant.")),
            .optional("clientId", .string("The OpenID Connect client the session was granted to; absent for the API's own sessions.")),
            .required("createdAt", .timestamp),
            .required("lastUsedAt", .timestamp.described("Its last refresh (its sign-in until the first).")),
            .required("current", .boolean("The session of the ID token that asked.")),
        ])
    }
    public static var example: Self {
        Self(
            id: "AAGUsJ3kR2mHq8l1pX4b9w", deviceName: "Firefox on Linux", network: "203.0.113.0/24", method: "password", clientId: nil,
            createdAt: JSONSchema.Example.timestamp, lastUsedAt: JSONSchema.Example.timestamp, current: true)
    }
}

extension DeviceSessionListBody: DocumentedBody {
    public static let schemaName = "DeviceSessionList"
    public static var schema: JSONSchema {
        .object("The account's live sessions, newest first.", [.required("sessions", .array(.body(DeviceSessionBody.self)))])
    }
    public static var example: Self { Self(sessions: [.example]) }
    public static var referencedBodies: [any DocumentedBody.Type] { [DeviceSessionBody.self] }
}

extension ActivityEntryBody: DocumentedBody {
    public static let schemaName = "ActivityEntry"
    public static var schema: JSONSchema {
        .object("Something that happened to the account (never a code, a token, an address or a full IP).", [
            .required("at", .timestamp),
            .required("kind", .oneOf(ActivityEntryBody.kinds)),
            .optional("method", .string("signIn: how (`password`, `emailLink`, …); sessionRevoked: why (`signOut`, `revoked`, `revokedOthers`, `passwordChanged`, …).")),
            .optional("deviceName", .string("signIn: the device (\"Chrome on Linux\").")),
            .optional("network", .string("signIn: the /24 (IPv4) or /48 (IPv6) it came from.")),
        ])
    }
    public static var example: Self {
        Self(at: JSONSchema.Example.timestamp, kind: "signIn", method: "password", deviceName: "Firefox on Linux", network: "203.0.113.0/24")
    }
}

extension ActivityListBody: DocumentedBody {
    public static let schemaName = "ActivityList"
    public static var schema: JSONSchema {
        .object("A page of the account's activity, newest first.", [
            .required("activity", .array(.body(ActivityEntryBody.self))),
            .optional("nextCursor", .string("Pass as `cursor` for the next page; null on the last (always present).")),
        ])
    }
    public static var example: Self { Self(activity: [.example], nextCursor: "MTczODMyNDgwMCA0Mg") }
    public static var referencedBodies: [any DocumentedBody.Type] { [ActivityEntryBody.self] }
}
