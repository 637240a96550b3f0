/// A key that signs JSON Web Tokens (RFC 7515 compact JWS) with one algorithm and publishes its
/// public half as a JWK: ``SigningKey`` (ES256) or ``RSASigningKey`` (RS256).
///
/// The algorithm belongs to the key, not to the token: a token's header names the key's algorithm
/// when it is signed, and a token verifies only under a key of the algorithm its header names
/// (RFC 8725 §3.1), so that no header can make a key verify a signature of another kind.
public protocol JSONWebSigningKey: Sendable {
    /// The `kid` under which the public key is published.
    var keyID: String { get }
    /// The JWS algorithm this key signs with: the header's `alg`.
    var algorithm: JSONWebToken.Algorithm { get }
    /// The public key as a JWK (RFC 7517) object, with its `kid`, `alg` and `use`.
    var publicJWK: [String: String] { get }
    /// The JWS signature of `message` (the signing input `header.payload`).
    /// - Throws: `CryptoError` when signing fails.
    func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8]
    /// True when `signature` is this key's JWS signature of `message`.
    func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool
}

extension SigningKey: JSONWebSigningKey {
    /// ES256: ECDSA over P-256 with SHA-256 (RFC 7518 §3.4).
    public var algorithm: JSONWebToken.Algorithm { .es256 }
}
