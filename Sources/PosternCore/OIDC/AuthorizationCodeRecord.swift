/// An OpenID Connect authorization code as stored: only the SHA-256 of the code (never the code),
/// and everything its redemption is bound to (RFC 6749 §4.1.3, RFC 7636 §4.6, OpenID Connect
/// Core §3.1.3.2): the client, the redirect URI, the PKCE challenge and the nonce.
public struct AuthorizationCodeRecord: Sendable, Hashable {
    /// SHA-256 of the code.
    public var codeHash: [UInt8]
    /// The client it was issued to; another client's redemption is `invalid_grant`.
    public var clientID: String
    /// Whose sign-in it carries.
    public var uid: String
    /// The `redirect_uri` of the authorization request, which the token request must repeat exactly.
    public var redirectURI: String
    /// The scopes granted (each a scope token: no spaces).
    public var scopes: [String]
    /// The request's `nonce`, for the ID token; nil when it sent none.
    public var nonce: String?
    /// The PKCE S256 challenge; nil only for a client registered with `allowNoPkce` that sent none.
    public var codeChallenge: String?
    /// When the person authenticated (the ID token's `auth_time`).
    public var authTime: Int64
    /// How they authenticated (the ID token's `amr`; each a method token: no spaces).
    public var methods: [String]
    /// The refresh token family the redemption gives, chosen when the code is made: a replayed code
    /// revokes it (RFC 6749 §4.1.2) without the redemption writing anything back.
    public var refreshFamily: String
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When it stops being redeemable.
    public var expiresAt: Int64
    /// When it was redeemed; nil until then.
    public var consumedAt: Int64?

    public init(
        codeHash: [UInt8], clientID: String, uid: String, redirectURI: String, scopes: [String], nonce: String?,
        codeChallenge: String?, authTime: Int64, methods: [String], refreshFamily: String, createdAt: Int64, expiresAt: Int64,
        consumedAt: Int64? = nil
    ) {
        self.codeHash = codeHash
        self.clientID = clientID
        self.uid = uid
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.authTime = authTime
        self.methods = methods
        self.refreshFamily = refreshFamily
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}

/// What consuming an authorization code found.
public enum AuthorizationCodeConsumption: Sendable, Hashable {
    /// This call consumed it: the record, with `consumedAt` set. Exactly one call gets this.
    case consumed(AuthorizationCodeRecord)
    /// It was consumed before (a replay): the record as the first consumption left it.
    case replayed(AuthorizationCodeRecord)
}
