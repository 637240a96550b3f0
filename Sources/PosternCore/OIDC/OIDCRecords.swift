/// An authorization request that passed its checks and waits for the person to sign in on the
/// hosted page, bound to the browser that made it (the SHA-256 of its `postern_browser` cookie):
/// the email link and the 6-digit code finish it only there. Its parameters are kept as sent and
/// checked again when it resumes (the client may have been removed meanwhile).
public struct OIDCPendingRequest: Sendable, Hashable {
    /// Random, base64url: the hosted page's forms and the email link's continue URL name it.
    public var id: String
    /// SHA-256 of the browser's `postern_browser` cookie.
    public var browserHash: [UInt8]
    /// The client it is for (so that removing a client can be seen in the row).
    public var clientID: String
    /// The authorization request's parameters, each name once.
    public var parameters: [String: String]
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When the hosted page stops taking it.
    public var expiresAt: Int64

    public init(id: String, browserHash: [UInt8], clientID: String, parameters: [String: String], createdAt: Int64, expiresAt: Int64) {
        self.id = id
        self.browserHash = browserHash
        self.clientID = clientID
        self.parameters = parameters
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A person signed in on the hosted page, in one browser: a second client, or `prompt=none`, signs
/// in from it without mail. Stored by the SHA-256 of its cookie, never the cookie.
public struct OIDCBrowserSession: Sendable, Hashable {
    /// SHA-256 of the session cookie.
    public var hash: [UInt8]
    /// Who is signed in.
    public var uid: String
    /// When they signed in (the ID tokens' `auth_time`).
    public var authTime: Int64
    /// How (the ID tokens' `amr`; each a method token: no spaces).
    public var methods: [String]
    /// The account's `sessionVersion` at sign-in: "sign out everywhere" ends the session.
    public var sessionVersion: Int64
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When it ends on its own.
    public var expiresAt: Int64

    public init(hash: [UInt8], uid: String, authTime: Int64, methods: [String], sessionVersion: Int64, createdAt: Int64, expiresAt: Int64) {
        self.hash = hash
        self.uid = uid
        self.authTime = authTime
        self.methods = methods
        self.sessionVersion = sessionVersion
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What a person allowed a client that is not first-party: the scopes, remembered until withdrawn.
public struct OIDCConsent: Sendable, Hashable {
    public var uid: String
    public var clientID: String
    /// The scopes granted (each a scope token), in the order asked.
    public var scopes: [String]
    /// Seconds since 1970.
    public var grantedAt: Int64

    public init(uid: String, clientID: String, scopes: [String], grantedAt: Int64) {
        self.uid = uid
        self.clientID = clientID
        self.scopes = scopes
        self.grantedAt = grantedAt
    }
}
