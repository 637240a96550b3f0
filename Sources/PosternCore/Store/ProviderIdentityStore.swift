/// An identity provider's subject linked to an account (issue 46): (provider, subject) → uid,
/// with the address the provider vouched for when it was linked.
public struct ProviderIdentityLink: Sendable, Hashable {
    /// The account's name for the provider: `apple`, `google`, `oidc:<id>` (``Provider/rawValue``).
    public var provider: String
    /// The provider's `sub`: stable for the person at that provider (Apple: per team).
    public var subject: String
    /// The account it signs in to.
    public var uid: String
    /// The address the provider's token carried when it was linked, if any.
    public var email: EmailAddress?
    /// Whether the provider said that address was verified.
    public var emailVerified: Bool
    /// Seconds since 1970.
    public var createdAt: Int64
    /// Seconds since 1970 of the last sign-in with it.
    public var lastUsedAt: Int64

    public init(
        provider: String, subject: String, uid: String, email: EmailAddress?, emailVerified: Bool, createdAt: Int64, lastUsedAt: Int64
    ) {
        self.provider = provider
        self.subject = subject
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// Provider identity reads, part of every `StoreReader`.
public protocol ProviderIdentityReader {
    /// The identity (provider, subject), if it is linked to an account.
    func providerIdentity(provider: String, subject: String) throws -> ProviderIdentityLink?
    /// The identities linked to account `uid`, oldest first (at most one per provider).
    func providerIdentities(uid: String) throws -> [ProviderIdentityLink]
}

/// Provider identity changes and the replay ledger of providers' ID tokens, part of every `StoreWriter`.
public protocol ProviderIdentityWriter: ProviderIdentityReader {
    /// Links `identity`; false, and nothing written, when (provider, subject) is linked already or
    /// the account holds an identity of that provider (the unique keys decide between concurrent
    /// writers: exactly one gets true). Throws `notFound` when the account does not exist.
    func insertProviderIdentity(_ identity: ProviderIdentityLink) throws -> Bool
    /// Sets the identity's `lastUsedAt` (and the address it vouches for now); nothing when it is gone.
    func touchProviderIdentity(provider: String, subject: String, email: EmailAddress?, emailVerified: Bool, at: Int64) throws
    /// Unlinks account `uid`'s identity of `provider`; false when it has none.
    func deleteProviderIdentity(uid: String, provider: String) throws -> Bool
    /// Unlinks the identity (provider, subject) from whichever account holds it; the uid it was
    /// linked to, nil when it was not linked (Apple's "account deleted" notification).
    func deleteProviderIdentity(provider: String, subject: String) throws -> String?
    /// Records that the ID token with SHA-256 `tokenHash` was used, kept until `expiresAt`; false
    /// when it was recorded already (a replay: the unique key decides, exactly one caller gets true).
    func useProviderToken(hash tokenHash: [UInt8], expiresAt: Int64) throws -> Bool
    /// Forgets at most `limit` token uses that expired at or before `horizon`; returns how many.
    func pruneProviderTokenUses(expiredBy horizon: Int64, limit: Int) throws -> Int
}
