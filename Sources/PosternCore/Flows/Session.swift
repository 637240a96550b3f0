/// A signed-in session (API.md "Session").
public struct Session: Sendable, Hashable {
    public var uid: String
    /// ES256 JWT, verifiable with the JWKS.
    public var idToken: String
    /// Opaque; rotated on every use.
    public var refreshToken: String
    /// Seconds until the ID token expires.
    public var expiresIn: Int64
    public var isAnonymous: Bool
    public var email: String?

    /// Creates a session value.
    public init(uid: String, idToken: String, refreshToken: String, expiresIn: Int64, isAnonymous: Bool, email: String?) {
        self.uid = uid
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.isAnonymous = isAnonymous
        self.email = email
    }
}

/// The result of every sign-in (API.md "LoginDescriptor").
public struct LoginDescriptor: Sendable, Hashable {
    /// Set when an anonymous account was replaced by an existing one: the app moves its data.
    public struct Migration: Sendable, Hashable {
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
    /// True exactly when the address had no account before the call.
    public var isNewUser: Bool
    public var session: Session
    public var migration: Migration?
    /// True when a password sign-up was confirmed away from the device that signed up (no
    /// verifier, not the same session): the account exists without the chosen password, and the
    /// app should ask for one (`POST /v1/me/password`; the sign-in is recent).
    public var needsPassword: Bool = false

    /// Creates a login value.
    public init(
        uid: String, email: String?, isNewUser: Bool, session: Session, migration: Migration?, needsPassword: Bool = false
    ) {
        self.uid = uid
        self.email = email
        self.isNewUser = isNewUser
        self.session = session
        self.migration = migration
        self.needsPassword = needsPassword
    }
}

/// What `GET /v1/me` returns.
public struct UserRecord: Sendable, Hashable {
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var isAnonymous: Bool
    public var providers: [String]
    /// The app-owned JSON object, as encoded text ("{}" when unset).
    public var attributes: String
    public var createdAt: Int64
    public var lastSignInAt: Int64?
    public var disabled: Bool

    /// The record of `account`.
    public init(_ account: Account) {
        uid = account.uid
        email = account.email?.address
        emailVerified = account.emailVerified
        displayName = account.displayName
        isAnonymous = account.isAnonymous
        providers = account.providers.map(\.rawValue).sorted()
        attributes = account.attributes ?? "{}"
        createdAt = account.createdAt
        lastSignInAt = account.lastSignInAt
        disabled = account.disabled
    }
}

/// The verified claims of an ID token.
public struct IDTokenClaims: Sendable, Hashable {
    public var uid: String
    public var issuedAt: Int64
    public var expiresAt: Int64
    public var authTime: Int64
    public var signInMethod: String
    /// The public id of the session it was issued to (`sid`, ``DeviceSession/id``); nil for a
    /// token issued before sessions were kept.
    public var sessionID: String? = nil
}

/// What `/v1/actions/inspect` says about a link, consuming nothing.
public struct ActionInfo: Sendable, Hashable {
    public var mode: EmailAction
    /// The address, except for a link sent with a PKCE challenge: whoever holds such a link
    /// without its verifier learns nothing from it.
    public var email: String?
    public var expiresAt: Int64
    public var continueURL: String?
}

/// What `/v1/actions/apply` did.
public struct AppliedAction: Sendable, Hashable {
    public var mode: EmailAction
    public var email: String
}
