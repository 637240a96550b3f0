/// A sign-in method an account has used.
public enum Provider: String, Sendable, Hashable, CaseIterable, Codable {
    case password
    case emailLink
    /// An SMS code to a number the account holds verified (`--phone-sign-in`).
    case phone
}

/// A user account: anonymous, or with an address.
public struct Account: Sendable, Hashable {
    /// The stable user id (`sub` of ID tokens).
    public var uid: String
    /// The account's address; nil for an anonymous account.
    public var email: EmailAddress?
    /// Whether the holder of `email` proved they receive mail there.
    public var emailVerified: Bool
    /// The PHC scrypt string, or nil when the account has no password.
    public var passwordHash: String?
    /// Shown to the user; set by the app.
    public var displayName: String?
    /// An app-owned JSON object (≤ 4 KiB), kept as its encoded text.
    public var attributes: String?
    /// Preferred language for mail (BCP 47), if known.
    public var locale: String?
    /// A disabled account cannot sign in.
    public var disabled: Bool
    /// Seconds since 1970.
    public var createdAt: Int64
    /// Seconds since 1970 of the last successful sign-in.
    public var lastSignInAt: Int64?
    /// Methods the account has signed in with.
    public var providers: Set<Provider>
    /// Raised when every session is revoked; ID tokens carry the version they were issued under
    /// (claim `sv`) and are refused once it changes.
    public var sessionVersion: Int64

    /// True when the account has no address and has never signed in by phone (an anonymous
    /// session). An account made by a phone sign-in has no address but is not anonymous: it is
    /// never upgraded or migrated away as an anonymous one would be.
    public var isAnonymous: Bool { email == nil && !providers.contains(.phone) }

    /// Creates an account record.
    public init(
        uid: String, email: EmailAddress? = nil, emailVerified: Bool = false, passwordHash: String? = nil,
        displayName: String? = nil, attributes: String? = nil, locale: String? = nil, disabled: Bool = false,
        createdAt: Int64, lastSignInAt: Int64? = nil, providers: Set<Provider> = [], sessionVersion: Int64 = 0
    ) {
        self.sessionVersion = sessionVersion
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.passwordHash = passwordHash
        self.displayName = displayName
        self.attributes = attributes
        self.locale = locale
        self.disabled = disabled
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
        self.providers = providers
    }

    /// The binding for codes that must die when the address or password changes.
    public var credentialBinding: StateBinding {
        StateBinding(uid, email?.normalized ?? "", passwordHash ?? "")
    }
}
