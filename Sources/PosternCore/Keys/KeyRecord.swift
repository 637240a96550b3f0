/// What a key is for.
public enum KeyPurpose: String, Sendable, Hashable, CaseIterable {
    /// HMAC-SHA256 keys that sign action codes.
    case actionCode = "action-code"
    /// ES256 keys that sign ID tokens (the API's sessions and the OpenID Connect provider's
    /// tokens).
    case idToken = "id-token"
    /// RS256 keys (RSA, 2048 bits) that sign the OpenID Connect provider's tokens for clients
    /// registered with `idTokenSignedResponseAlg` RS256 (OpenID Connect Core §15.1 makes RS256
    /// mandatory); never the API's sessions.
    case idTokenRSA = "id-token-rsa"
    /// A Firebase project's password-hash signer key, stored by `postern users import --from
    /// firebase` so that the imported hashes verify; never rotated (it signs nothing), kept while
    /// any account may still hold such a hash.
    case firebaseHashKey = "firebase-hash-key"
    /// The HMAC key of phone numbers and phone-claim codes (issue 17): made once, never rotated,
    /// because a number's keyed hash is what keeps it on one account (a new key would forget
    /// every holding).
    case phoneNumber = "phone-number"

    /// The purposes that always have an active key and that `keys rotate` rotates.
    public static let rotating: [KeyPurpose] = [.actionCode, .idToken, .idTokenRSA]
}

/// A key's place in its life: one active key per purpose signs; retired keys only verify.
public enum KeyStatus: String, Sendable, Hashable {
    case active
    case retired
}

/// A key as the store keeps it: metadata in the clear, the secret sealed under the master key.
public struct KeyRecord: Sendable, Hashable {
    /// Unique across purposes; written into codes and used as the JWT `kid`.
    public var id: UInt32
    /// What the key signs.
    public var purpose: KeyPurpose
    /// Active or retired.
    public var status: KeyStatus
    /// When it was made (seconds since 1970).
    public var createdAt: Int64
    /// When it stopped signing, if it has.
    public var retiredAt: Int64?
    /// After this instant nothing it signed can still be valid, so it may be removed.
    public var verifyUntil: Int64?
    /// The secret, sealed with `SecretBox` (AES-256-GCM) under the master key.
    public var sealedSecret: [UInt8]

    /// Creates a record.
    public init(
        id: UInt32, purpose: KeyPurpose, status: KeyStatus, createdAt: Int64, retiredAt: Int64? = nil,
        verifyUntil: Int64? = nil, sealedSecret: [UInt8]
    ) {
        self.id = id
        self.purpose = purpose
        self.status = status
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.verifyUntil = verifyUntil
        self.sealedSecret = sealedSecret
    }
}
