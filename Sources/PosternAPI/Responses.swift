import Foundation

/// The answers of the HTTP API (API.md), as the server sends them and a client decodes them.
/// Optional fields are sent as explicit `null`, as the contract shows them.

/// API.md "Session".
public struct SessionBody: Sendable, Hashable, Codable {
    public var uid: String
    /// ES256 JWT, verifiable with `/.well-known/jwks.json`.
    public var idToken: String
    /// Opaque; rotated on every use.
    public var refreshToken: String
    /// Seconds until the ID token expires.
    public var expiresIn: Int64
    public var isAnonymous: Bool
    public var email: String?

    public init(uid: String, idToken: String, refreshToken: String, expiresIn: Int64, isAnonymous: Bool, email: String?) {
        self.uid = uid
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.isAnonymous = isAnonymous
        self.email = email
    }

    private enum CodingKeys: String, CodingKey { case uid, idToken, refreshToken, expiresIn, isAnonymous, email }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uid, forKey: .uid)
        try c.encode(idToken, forKey: .idToken)
        try c.encode(refreshToken, forKey: .refreshToken)
        try c.encode(expiresIn, forKey: .expiresIn)
        try c.encode(isAnonymous, forKey: .isAnonymous)
        try c.encode(email, forKey: .email)
    }
}

/// API.md "LoginDescriptor".
public struct LoginBody: Sendable, Hashable, Codable {
    /// Set when an anonymous account was replaced by an existing one: move the app's data.
    public struct Migration: Sendable, Hashable, Codable {
        public var fromUid: String
        public var toUid: String
        public var allowMigration: Bool

        public init(fromUid: String, toUid: String, allowMigration: Bool) {
            self.fromUid = fromUid
            self.toUid = toUid
            self.allowMigration = allowMigration
        }
    }

    public var uid: String
    public var email: String?
    /// True exactly when the address had no account before: show the onboarding.
    public var isNewUser: Bool
    public var session: SessionBody
    public var migration: Migration?
    /// A password sign-up confirmed away from its device: ask for a password.
    public var needsPassword: Bool

    public init(uid: String, email: String?, isNewUser: Bool, session: SessionBody, migration: Migration?, needsPassword: Bool) {
        self.uid = uid
        self.email = email
        self.isNewUser = isNewUser
        self.session = session
        self.migration = migration
        self.needsPassword = needsPassword
    }

    private enum CodingKeys: String, CodingKey { case uid, email, isNewUser, session, migration, needsPassword }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uid = try c.decode(String.self, forKey: .uid)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        isNewUser = try c.decode(Bool.self, forKey: .isNewUser)
        session = try c.decode(SessionBody.self, forKey: .session)
        migration = try c.decodeIfPresent(Migration.self, forKey: .migration)
        // Servers before the field existed never set a password without the device.
        needsPassword = try c.decodeIfPresent(Bool.self, forKey: .needsPassword) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uid, forKey: .uid)
        try c.encode(email, forKey: .email)
        try c.encode(isNewUser, forKey: .isNewUser)
        try c.encode(session, forKey: .session)
        try c.encode(migration, forKey: .migration)
        try c.encode(needsPassword, forKey: .needsPassword)
    }
}

/// `GET /v1/me` and the admin user endpoints.
public struct UserBody: Sendable, Hashable, Codable {
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var isAnonymous: Bool
    public var providers: [String]
    /// The app-owned JSON object.
    public var attributes: [String: JSONValue]
    /// ISO 8601 UTC.
    public var createdAt: String
    public var lastSignInAt: String?
    public var disabled: Bool

    public init(
        uid: String, email: String?, emailVerified: Bool, displayName: String?, isAnonymous: Bool, providers: [String],
        attributes: [String: JSONValue], createdAt: String, lastSignInAt: String?, disabled: Bool
    ) {
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.isAnonymous = isAnonymous
        self.providers = providers
        self.attributes = attributes
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
        self.disabled = disabled
    }

    private enum CodingKeys: String, CodingKey {
        case uid, email, emailVerified, displayName, isAnonymous, providers, attributes, createdAt, lastSignInAt, disabled
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uid, forKey: .uid)
        try c.encode(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(isAnonymous, forKey: .isAnonymous)
        try c.encode(providers, forKey: .providers)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(lastSignInAt, forKey: .lastSignInAt)
        try c.encode(disabled, forKey: .disabled)
    }
}

/// An outbox message's metadata (never its body): the admin API and `postern outbox status`.
public struct OutboxMessageBody: Sendable, Hashable, Codable {
    public var id: Int64
    public var kind: String
    public var recipient: String
    public var state: String
    public var attempts: Int
    public var nextAttemptAt: String
    public var createdAt: String
    public var giveUpAt: String
    public var finishedAt: String?
    /// The relay's last reply; null before the first attempt.
    public var lastReply: String?
    /// What a delivery report said about it after it was sent; null when none came.
    public var bounce: BounceBody?

    public init(
        id: Int64, kind: String, recipient: String, state: String, attempts: Int, nextAttemptAt: String, createdAt: String,
        giveUpAt: String, finishedAt: String?, lastReply: String?
    ) {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.giveUpAt = giveUpAt
        self.finishedAt = finishedAt
        self.lastReply = lastReply
    }

    private enum CodingKeys: String, CodingKey {
        case id, kind, recipient, state, attempts, nextAttemptAt, createdAt, giveUpAt, finishedAt, lastReply, bounce
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(recipient, forKey: .recipient)
        try c.encode(state, forKey: .state)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(giveUpAt, forKey: .giveUpAt)
        try c.encode(finishedAt, forKey: .finishedAt)
        try c.encode(lastReply, forKey: .lastReply)
        try c.encode(bounce, forKey: .bounce)
    }
}

/// What a delivery report said about a sent message (`bounce` of an outbox message).
public struct BounceBody: Sendable, Hashable, Codable {
    /// `failed` (the address is suppressed), `delayed`, or `complaint` (an abuse report; suppressed).
    public var kind: String
    /// The enhanced status code (`5.1.1`), or the abuse report's feedback type.
    public var status: String
    /// The remote server's words, the recipient's address taken out.
    public var detail: String
    /// When the report was taken in.
    public var at: String

    public init(kind: String, status: String, detail: String, at: String) {
        self.kind = kind
        self.status = status
        self.detail = detail
        self.at = at
    }
}

/// The answer of `POST /v1/admin/bounces`.
public struct BounceResultBody: Sendable, Hashable, Codable {
    /// `bounced`, `delayed`, `complaint` or `ignored`.
    public var outcome: String
    /// The outbox message the report is about; null when it matched none.
    public var messageId: Int64?
    /// The status or feedback type; null when ignored.
    public var status: String?
    /// Why nothing was done; null unless ignored.
    public var reason: String?

    public init(outcome: String, messageId: Int64?, status: String?, reason: String?) {
        self.outcome = outcome
        self.messageId = messageId
        self.status = status
        self.reason = reason
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(messageId, forKey: .messageId)
        try c.encode(status, forKey: .status)
        try c.encode(reason, forKey: .reason)
    }
}

/// `POST /v1/actions/inspect`.
public struct ActionInfoBody: Sendable, Hashable, Codable {
    public var mode: String
    /// Null for a link sent with a PKCE challenge.
    public var email: String?
    public var expiresAt: String
    public var continueUrl: String?

    public init(mode: String, email: String?, expiresAt: String, continueUrl: String?) {
        self.mode = mode
        self.email = email
        self.expiresAt = expiresAt
        self.continueUrl = continueUrl
    }

    private enum CodingKeys: String, CodingKey { case mode, email, expiresAt, continueUrl }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encode(email, forKey: .email)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encode(continueUrl, forKey: .continueUrl)
    }
}

/// `POST /v1/actions/apply`.
public struct AppliedActionBody: Sendable, Hashable, Codable {
    public var mode: String
    public var email: String

    public init(mode: String, email: String) {
        self.mode = mode
        self.email = email
    }
}

/// The API's error shape: `{"error": {"code", "message", …details}}`.
public struct ErrorBody: Sendable, Hashable, Codable {
    /// The error object.
    public struct Detail: Sendable, Hashable, Codable {
        /// `UPPER_SNAKE_CASE`, from the catalogue.
        public var code: String
        /// A sentence for a developer.
        public var message: String
        /// Set with `MIGRATION_REQUIRED`.
        public var anonymousUid: String?
        /// Set with `WEAK_PASSWORD`: the rule of the policy the password breaks.
        public var rule: String?
        /// Set (`"true"`) with `LINK_USED` when the browser or device presenting the link is the
        /// one that completed it: the user is already signed in there.
        public var signedInHere: String?
        /// Set with `CHALLENGE_REQUIRED`: what to solve, `altcha` (the built-in proof of work) or a
        /// CAPTCHA service (`turnstile`, `hcaptcha`, `recaptcha`).
        public var challenge: String?
        /// Set with `CHALLENGE_REQUIRED`: where a challenge is fetched (`/v1/challenge`).
        public var challengeUrl: String?
        /// Set with `CHALLENGE_REQUIRED` for a CAPTCHA: the site's public key for its widget.
        public var siteKey: String?

        public init(
            code: String, message: String, anonymousUid: String? = nil, rule: String? = nil, signedInHere: String? = nil,
            challenge: String? = nil, challengeUrl: String? = nil, siteKey: String? = nil
        ) {
            self.challenge = challenge
            self.challengeUrl = challengeUrl
            self.siteKey = siteKey
            self.code = code
            self.message = message
            self.anonymousUid = anonymousUid
            self.rule = rule
            self.signedInHere = signedInHere
        }

        /// The code as a case of the catalogue; nil for a code this build does not know.
        public var knownCode: APIErrorCode? { APIErrorCode(rawValue: code) }
    }

    public var error: Detail

    public init(error: Detail) { self.error = error }
}

/// The one JSON encoding of the contract: keys sorted, slashes unescaped, explicit nulls.
public enum APIJSON {
    /// Encodes `value` (never fails for the contract's types).
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// Decodes `T` from `bytes`.
    /// - Throws: `DecodingError`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    // One of each, made once: their options never change after this, and Foundation's coders
    // may be used from several threads at once.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private static let decoder = JSONDecoder()
}

/// The 202 answer of the endpoints that send mail: `{"status": "sent"}` (sign-up:
/// `"verification_sent"`), the same for every address.
public struct AcceptedBody: Sendable, Hashable, Codable {
    /// What was accepted.
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        /// A mail is on its way (if the address can get one).
        case sent
        /// A sign-up's verification mail is on its way.
        case verificationSent = "verification_sent"
        /// `POST /v1/email-link/wait`: not approved yet; call again.
        case pending
    }

    /// What was accepted.
    public var status: Status
    /// Send-link with `approval`: the 2-digit number the asking device shows while it waits.
    public var approvalNumber: Int?

    /// The answer saying `status`.
    public init(status: Status, approvalNumber: Int? = nil) {
        self.status = status
        self.approvalNumber = approvalNumber
    }
}

/// The answer of `GET /v1/admin/outbox`.
public struct OutboxListBody: Sendable, Hashable, Codable {
    /// Newest first.
    public var messages: [OutboxMessageBody]

    /// The list of `messages`.
    public init(messages: [OutboxMessageBody]) { self.messages = messages }
}

/// The answer of `POST /v1/admin/outbox/{id}/retry`.
public struct RetriedMessageBody: Sendable, Hashable, Codable {
    /// The message queued again.
    public var id: Int64
    /// Always `queued`.
    public var status: String

    /// The answer for message `id`.
    public init(id: Int64) {
        self.id = id
        status = "queued"
    }
}

/// With `WEAK_PASSWORD`, the error's `rule`: which rule of the password policy the password breaks,
/// so a page in another language can say it in its own words.
public enum PasswordRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Fewer than `WireLimits.passwordMinimumLength` code points.
    case tooShort
    /// More than `WireLimits.passwordMaximumLength` code points.
    case tooLong
    /// The address itself, or its part before the @.
    case isTheAddress
}

/// A webhook endpoint as operators see it (never its secret): `GET /v1/admin/webhooks`,
/// `postern webhooks list --json`.
public struct WebhookEndpointBody: Sendable, Hashable, Codable {
    /// `ep_…` for an added endpoint, `settings-N` for the N-th of `--webhook-urls`.
    public var id: String
    public var url: String
    /// `["*"]` for every event, else the event types.
    public var events: [String]
    /// `api` (added by the CLI or the admin API) or `settings`.
    public var source: String
    /// Disabled by a 410 Gone: nothing is sent until it is added again.
    public var disabled: Bool
    /// Until when the secret a rotation replaced still signs beside the new one.
    public var previousSecretUntil: String?
    public var createdAt: String?

    public init(
        id: String, url: String, events: [String], source: String, disabled: Bool, previousSecretUntil: String?, createdAt: String?
    ) {
        self.id = id
        self.url = url
        self.events = events
        self.source = source
        self.disabled = disabled
        self.previousSecretUntil = previousSecretUntil
        self.createdAt = createdAt
    }
}

/// Every webhook endpoint.
public struct WebhookEndpointListBody: Sendable, Hashable, Codable {
    public var endpoints: [WebhookEndpointBody]
    public init(endpoints: [WebhookEndpointBody]) { self.endpoints = endpoints }
}

/// An endpoint just added or given a new secret, and that secret: shown this once.
public struct WebhookEndpointSecretBody: Sendable, Hashable, Codable {
    public var endpoint: WebhookEndpointBody
    /// `whsec_…`, for the receiver's Standard Webhooks library.
    public var secret: String
    public init(endpoint: WebhookEndpointBody, secret: String) {
        self.endpoint = endpoint
        self.secret = secret
    }
}

/// A queued `webhook.test` event.
public struct WebhookTestBody: Sendable, Hashable, Codable {
    /// The `webhook-id` the receiver will see.
    public var webhookId: String
    public init(webhookId: String) { self.webhookId = webhookId }
}

/// One attempt of the delivery log (never the address).
public struct OutboxAttemptBody: Sendable, Hashable, Codable {
    public var attemptedAt: String
    public var durationMs: Int64
    public var transport: String
    public var replyCode: Int?
    public var reply: String
    /// `sent`, `deferred` or `failed`.
    public var outcome: String

    public init(attemptedAt: String, durationMs: Int64, transport: String, replyCode: Int?, reply: String, outcome: String) {
        self.attemptedAt = attemptedAt
        self.durationMs = durationMs
        self.transport = transport
        self.replyCode = replyCode
        self.reply = reply
        self.outcome = outcome
    }
}

/// `GET /v1/admin/outbox/{id}`, `postern outbox show ID --json`: a message and its delivery log.
public struct OutboxMessageDetailBody: Sendable, Hashable, Codable {
    public var id: Int64
    /// The message's metadata; null once housekeeping purged it (its log may stay a little longer).
    public var message: OutboxMessageBody?
    /// Every attempt, oldest first.
    public var attempts: [OutboxAttemptBody]

    public init(id: Int64, message: OutboxMessageBody?, attempts: [OutboxAttemptBody]) {
        self.id = id
        self.message = message
        self.attempts = attempts
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(message, forKey: .message)
        try c.encode(attempts, forKey: .attempts)
    }
}
