/// A way an account has signed in: `password`, `emailLink`, `phone`, or an identity provider's
/// name (`apple`, `google`, `oidc:<id>`: ``IdentityProvider/accountProviderName``), as the API's
/// `providers` lists them.
public struct Provider: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String

    /// A known method or a provider name of the right shape; nil for anything else (an import's
    /// or a stored value's typo is refused, not kept).
    public init?(rawValue: String) {
        guard Self.methods.contains(rawValue) || Self.isIdentityProviderName(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    public static let password = Provider(known: "password")
    public static let emailLink = Provider(known: "emailLink")
    /// An SMS code to a number the account holds verified (`--phone-sign-in`).
    public static let phone = Provider(known: "phone")
    /// Sign in with Apple, Google, or another OpenID provider of `--identity-providers`.
    public static func identity(_ provider: IdentityProvider) -> Provider { Provider(known: provider.accountProviderName) }

    /// True for `apple`, `google` and `oidc:<id>`: an identity provider's sign-in.
    public var isIdentityProvider: Bool { Self.isIdentityProviderName(rawValue) }

    private static let methods: Set<String> = ["password", "emailLink", "phone"]

    /// `apple`, `google`, or `oidc:` and an id as ``IdentityProvider/parseList(_:)`` accepts it.
    static func isIdentityProviderName(_ name: String) -> Bool {
        if name == "apple" || name == "google" { return true }
        guard name.hasPrefix("oidc:") else { return false }
        return IdentityProvider.isValidID(String(name.dropFirst(5)))
    }
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

    /// True when the account has no address, has never signed in by phone and holds no identity
    /// provider's sign-in (an anonymous session). An account made by a phone or provider sign-in
    /// has no address perhaps but is not anonymous: it is never upgraded or migrated away as an
    /// anonymous one would be.
    public var isAnonymous: Bool { email == nil && !providers.contains { $0 == .phone || $0.isIdentityProvider } }

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
