/// The request bodies of the HTTP API (API.md), as a client sends them and the server decodes
/// them. Absent and `null` optional fields mean the same, except where a PATCH uses `Patch`.

/// A PATCH field: left alone, set to null, or set to a value.
public enum Patch<Value: Sendable & Hashable & Codable>: Sendable, Hashable {
    case unchanged
    case null
    case value(Value)

    /// `.some(nil)` for null, `.some(value)` for a value, nil when unchanged.
    public var change: Value?? {
        switch self {
        case .unchanged: nil
        case .null: .some(nil)
        case .value(let value): .some(value)
        }
    }
}

extension KeyedDecodingContainer {
    /// A PATCH field: `.unchanged` when the key is absent.
    func decodePatch<Value>(_ type: Value.Type, forKey key: Key) throws -> Patch<Value> {
        guard contains(key) else { return .unchanged }
        return try decodeNil(forKey: key) ? .null : .value(try decode(Value.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    mutating func encodePatch<Value>(_ patch: Patch<Value>, forKey key: Key) throws {
        switch patch {
        case .unchanged: break
        case .null: try encodeNil(forKey: key)
        case .value(let value): try encode(value, forKey: key)
        }
    }
}

/// `POST /v1/email-link/send`.
public struct EmailLinkSendBody: Sendable, Hashable, Codable {
    public var email: String
    public var continueUrl: String?
    public var locale: String?
    /// PKCE S256: base64url(SHA-256(codeVerifier)).
    public var codeChallenge: String?
    public var idToken: String?
    /// "Approve on your other device": the request waits for the owner to pick, on the link's
    /// page, the number the answer gives; needs `codeChallenge` (its verifier is the secret the
    /// device waits on, `POST /v1/email-link/wait`).
    public var approval: Bool?
    /// The asking device as the page names it ("Ada's iPhone"); without it, read from the
    /// User-Agent ("Chrome on Linux"). At most 64 characters.
    public var deviceName: String?
    /// Bind the link to this browser: the answer sets the `postern_browser` cookie (unless the
    /// browser sent one), and the link then completes only where that cookie is sent (or by the
    /// 6-digit code typed anywhere); its page tells another browser so, and says "already signed
    /// in" to this one after it was used. For a browser calling Postern's own origin; not with
    /// `codeChallenge` or `approval`.
    public var bindBrowser: Bool?
    /// The challenge's solution, when the service asks for one (`CHALLENGE_REQUIRED`): the ALTCHA
    /// payload of a proof of work from `GET /v1/challenge`, or the CAPTCHA widget's token.
    public var challengeSolution: String?

    public init(
        email: String, continueUrl: String? = nil, locale: String? = nil, codeChallenge: String? = nil, idToken: String? = nil,
        approval: Bool? = nil, deviceName: String? = nil, bindBrowser: Bool? = nil, challengeSolution: String? = nil
    ) {
        self.challengeSolution = challengeSolution
        self.email = email
        self.continueUrl = continueUrl
        self.locale = locale
        self.codeChallenge = codeChallenge
        self.idToken = idToken
        self.approval = approval
        self.deviceName = deviceName
        self.bindBrowser = bindBrowser
    }
}

/// `POST /v1/email-link/wait`: the asking device waits for the owner's approval.
public struct EmailLinkWaitBody: Sendable, Hashable, Codable {
    /// The address the link was sent to.
    public var email: String
    /// The PKCE verifier of the request: the waiting device's secret.
    public var codeVerifier: String
    /// The session on the waiting device (an anonymous one to upgrade), as for `complete`.
    public var idToken: String?
    public var allowMigration: Bool?
    /// How long this call may wait for the approval, 0 to 25 seconds (default 25).
    public var waitSeconds: Int?

    public init(email: String, codeVerifier: String, idToken: String? = nil, allowMigration: Bool? = nil, waitSeconds: Int? = nil) {
        self.email = email
        self.codeVerifier = codeVerifier
        self.idToken = idToken
        self.allowMigration = allowMigration
        self.waitSeconds = waitSeconds
    }
}

/// `POST /v1/email-link/complete`.
public struct EmailLinkCompleteBody: Sendable, Hashable, Codable {
    /// Any pasted text holding the link.
    public var link: String?
    public var oobCode: String?
    /// The 6 digits from the mail; needs `email`.
    public var code: String?
    public var email: String?
    public var codeVerifier: String?
    public var idToken: String?
    public var allowMigration: Bool?

    public init(
        link: String? = nil, oobCode: String? = nil, code: String? = nil, email: String? = nil, codeVerifier: String? = nil,
        idToken: String? = nil, allowMigration: Bool? = nil
    ) {
        self.link = link
        self.oobCode = oobCode
        self.code = code
        self.email = email
        self.codeVerifier = codeVerifier
        self.idToken = idToken
        self.allowMigration = allowMigration
    }
}

/// `POST /v1/password/sign-up`.
public struct SignUpBody: Sendable, Hashable, Codable {
    public var email: String
    public var password: String
    public var idToken: String?
    public var continueUrl: String?
    public var locale: String?
    /// PKCE S256 of the device that signs up: the password applies only with its verifier.
    public var codeChallenge: String?
    /// The challenge's solution, when the service asks for one (`CHALLENGE_REQUIRED`): the ALTCHA
    /// payload of a proof of work from `GET /v1/challenge`, or the CAPTCHA widget's token.
    public var challengeSolution: String?

    public init(
        email: String, password: String, idToken: String? = nil, continueUrl: String? = nil, locale: String? = nil,
        codeChallenge: String? = nil, challengeSolution: String? = nil
    ) {
        self.challengeSolution = challengeSolution
        self.email = email
        self.password = password
        self.idToken = idToken
        self.continueUrl = continueUrl
        self.locale = locale
        self.codeChallenge = codeChallenge
    }
}

/// `POST /v1/password/sign-in`.
public struct PasswordSignInBody: Sendable, Hashable, Codable {
    public var email: String
    public var password: String
    public var idToken: String?
    public var allowMigration: Bool?

    public init(email: String, password: String, idToken: String? = nil, allowMigration: Bool? = nil) {
        self.email = email
        self.password = password
        self.idToken = idToken
        self.allowMigration = allowMigration
    }
}

/// `POST /v1/password/reset`.
public struct PasswordResetBody: Sendable, Hashable, Codable {
    public var email: String
    public var continueUrl: String?
    public var locale: String?
    /// The challenge's solution, when the service asks for one (`CHALLENGE_REQUIRED`): the ALTCHA
    /// payload of a proof of work from `GET /v1/challenge`, or the CAPTCHA widget's token.
    public var challengeSolution: String?

    public init(email: String, continueUrl: String? = nil, locale: String? = nil, challengeSolution: String? = nil) {
        self.challengeSolution = challengeSolution
        self.email = email
        self.continueUrl = continueUrl
        self.locale = locale
    }
}

/// `POST /v1/actions/inspect` and `POST /v1/actions/apply`.
public struct ActionBody: Sendable, Hashable, Codable {
    public var link: String?
    public var oobCode: String?
    /// For a reset link.
    public var newPassword: String?

    public init(link: String? = nil, oobCode: String? = nil, newPassword: String? = nil) {
        self.link = link
        self.oobCode = oobCode
        self.newPassword = newPassword
    }
}

/// `POST /v1/token` and `POST /v1/sign-out`.
public struct RefreshTokenBody: Sendable, Hashable, Codable {
    public var refreshToken: String

    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// `PATCH /v1/me`.
public struct ProfilePatchBody: Sendable, Hashable, Codable {
    public var displayName: Patch<String>
    /// A JSON object the app owns (at most 4 KiB); absent or null leaves it.
    public var attributes: [String: JSONValue]?

    public init(displayName: Patch<String> = .unchanged, attributes: [String: JSONValue]? = nil) {
        self.displayName = displayName
        self.attributes = attributes
    }

    private enum CodingKeys: String, CodingKey { case displayName, attributes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        displayName = try c.decodePatch(String.self, forKey: .displayName)
        attributes = try c.decodeIfPresent([String: JSONValue].self, forKey: .attributes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodePatch(displayName, forKey: .displayName)
        try c.encodeIfPresent(attributes, forKey: .attributes)
    }
}

/// `POST /v1/me/password`.
public struct NewPasswordBody: Sendable, Hashable, Codable {
    public var password: String

    public init(password: String) { self.password = password }
}

/// `POST /v1/me/email`.
public struct ChangeEmailBody: Sendable, Hashable, Codable {
    public var newEmail: String
    public var continueUrl: String?

    public init(newEmail: String, continueUrl: String? = nil) {
        self.newEmail = newEmail
        self.continueUrl = continueUrl
    }
}

/// `POST /v1/me/verify-email`.
public struct VerifyEmailBody: Sendable, Hashable, Codable {
    public var continueUrl: String?

    public init(continueUrl: String? = nil) { self.continueUrl = continueUrl }
}

/// `POST /v1/admin/links`.
public struct AdminLinkBody: Sendable, Hashable, Codable {
    public var action: String
    public var email: String
    public var continueUrl: String?
    public var locale: String?
    /// Also queue the mail.
    public var send: Bool?

    public init(action: String, email: String, continueUrl: String? = nil, locale: String? = nil, send: Bool? = nil) {
        self.action = action
        self.email = email
        self.continueUrl = continueUrl
        self.locale = locale
        self.send = send
    }
}

/// `POST /v1/admin/invitations`.
public struct InvitationBody: Sendable, Hashable, Codable {
    public var email: String
    public var continueUrl: String?
    public var locale: String?

    public init(email: String, continueUrl: String? = nil, locale: String? = nil) {
        self.email = email
        self.continueUrl = continueUrl
        self.locale = locale
    }
}

/// The answer of `POST /v1/admin/links`.
public struct IssuedLinkBody: Sendable, Hashable, Codable {
    public var link: String
    /// The code inside the link: a secret.
    public var oobCode: String
    public var expiresAt: String
    public var queued: Bool

    public init(link: String, oobCode: String, expiresAt: String, queued: Bool) {
        self.link = link
        self.oobCode = oobCode
        self.expiresAt = expiresAt
        self.queued = queued
    }
}

/// `PATCH /v1/admin/users/{uid}`.
public struct AdminUserPatchBody: Sendable, Hashable, Codable {
    public var disabled: Bool?
    public var emailVerified: Bool?
    public var displayName: Patch<String>

    public init(disabled: Bool? = nil, emailVerified: Bool? = nil, displayName: Patch<String> = .unchanged) {
        self.disabled = disabled
        self.emailVerified = emailVerified
        self.displayName = displayName
    }

    private enum CodingKeys: String, CodingKey { case disabled, emailVerified, displayName }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        disabled = try c.decodeIfPresent(Bool.self, forKey: .disabled)
        emailVerified = try c.decodeIfPresent(Bool.self, forKey: .emailVerified)
        displayName = try c.decodePatch(String.self, forKey: .displayName)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(disabled, forKey: .disabled)
        try c.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try c.encodePatch(displayName, forKey: .displayName)
    }
}

/// An empty body (`POST /v1/accounts/anonymous`): any object is accepted.
public struct EmptyBody: Sendable, Hashable, Codable {
    public init() {}

    /// Any object; anything else (an array, a string) is refused, as for every other body.
    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: EmptyKeys.self)
    }

    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: EmptyKeys.self)
    }

    private struct EmptyKeys: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// `POST /v1/admin/webhooks`: a new endpoint.
public struct WebhookEndpointRequestBody: Sendable, Hashable, Codable {
    /// The event types a filter may name: the one list, which the core's `WebhookEvent.types`
    /// is (a test holds every event's `type` to it).
    public static let eventTypes = [
        "user.created", "user.signed_in", "user.anonymous_upgraded", "user.migrated", "user.email_changed",
        "user.password_changed", "user.password_reset", "user.deleted", "session.refresh_reuse_detected",
        "user.email_verified", "user.email_recovered", "user.profile_updated", "user.disabled", "session.revoked",
        "mail.sent", "mail.deferred", "mail.failed", "mail.bounced", "webhook.test", "phone.verified", "phone.removed",
        "user.provider_linked", "user.provider_unlinked",
    ]

    /// What a webhook URL must be, for the schema and the daemon alike (one rule): `http://` or
    /// `https://`, then a host that is one: a name of at least two characters with no `@` (no user
    /// or password), `[`, `]` or `:`, or an IPv6 address in brackets (RFC 3986's `IPv6address`),
    /// and an optional port 0–65535; no control character or space anywhere; at most
    /// ``urlMaximumLength`` characters.
    ///
    /// The host rule is there because the URL is echoed (`POST`/`GET /v1/admin/webhooks`) and
    /// curled: `http://[ab` or `http://a]b` is no URL (an unbalanced or non-IPv6 bracket; URL
    /// parsers refuse it, Python's `urlsplit` with "Invalid IPv6 URL"), and neither is a host with
    /// a character that compatibility normalisation (IDNA's, a URL parser's) turns into a
    /// delimiter: `／` (U+FF0F) is `/`, `＠` `@`, `℀` `a/c` — ``urlHostLookalikes``.
    public static let urlPattern =
        #"^https?://(?:[^\u0000-\u0020\u007f/@?#:\[\]"# + urlHostLookalikes + #"]{2,}|\["# + ipv6AddressPattern + #"\])"#
        + #"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"#
        + #"([/?#][^\u0000-\u0020\u007f]*)?$"#

    /// The characters whose NFKC form holds `/`, `?`, `#`, `@`, `:`, `[` or `]` (Unicode 14; all
    /// in the BMP), as a character-class body: not allowed in a webhook URL's host.
    static let urlHostLookalikes =
        #"\u2047-\u2049\u2100\u2101\u2105\u2106\u2a74\ufe13\ufe16\ufe47\ufe48\ufe55\ufe56\ufe5f\ufe6b"#
        + #"\uff03\uff0f\uff1a\uff1f\uff20\uff3b\uff3d"#

    /// RFC 3986's `IPv6address` (section 3.2.2) as a pattern: eight groups, `::` at most once, an
    /// IPv4 address as the last 32 bits.
    static let ipv6AddressPattern: String = {
        let h16 = "[0-9A-Fa-f]{1,4}"
        let octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
        let ls32 = "(?:\(h16):\(h16)|(?:\(octet)\\.){3}\(octet))"
        func head(_ most: Int) -> String { "(?:(?:\(h16):){0,\(most)}\(h16))?" }
        let forms = [
            "(?:\(h16):){6}\(ls32)", "::(?:\(h16):){5}\(ls32)", "\(head(0))::(?:\(h16):){4}\(ls32)",
            "\(head(1))::(?:\(h16):){3}\(ls32)", "\(head(2))::(?:\(h16):){2}\(ls32)", "\(head(3))::\(h16):\(ls32)",
            "\(head(4))::\(ls32)", "\(head(5))::\(h16)", "\(head(6))::",
        ]
        return "(?:" + forms.joined(separator: "|") + ")"
    }()
    public static let urlMaximumLength = 2000

    public var url: String
    /// Event types (`user.*` for every user event); absent or `["*"]`: every event.
    public var events: [String]?

    public init(url: String, events: [String]? = nil) {
        self.url = url
        self.events = events
    }
}
