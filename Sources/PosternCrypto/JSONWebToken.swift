import Foundation

/// Compact JWS (RFC 7515) with ES256 or RS256 over a JSON claims object.
public enum JSONWebToken {
    /// The JWS algorithms (RFC 7518 §3.1) this package signs and verifies: the header's `alg`.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable {
        /// ECDSA P-256 with SHA-256: ``SigningKey``.
        case es256 = "ES256"
        /// RSASSA-PKCS1-v1_5 with SHA-256: ``RSASigningKey``.
        case rs256 = "RS256"
    }

    /// The header's `typ`: what kind of token it is, so that a verifier of one kind refuses the
    /// other even when the same key signed both (RFC 8725 §3.11).
    public enum TokenType: String, Sendable, Hashable {
        /// An ID token (the API's sessions, OpenID Connect's ID tokens).
        case jwt = "JWT"
        /// An OAuth access token (RFC 9068 §2.1).
        case accessToken = "at+jwt"
    }

    /// Signs `claims` (a JSON object, already encoded) with `key`: `header.payload.signature`,
    /// with the key's algorithm as the header's `alg` and `type` as its `typ`.
    /// - Throws: `CryptoError` when signing fails.
    public static func sign(claims: Data, with key: some JSONWebSigningKey, type: TokenType = .jwt) throws(CryptoError) -> String {
        let header = #"{"alg":"\#(key.algorithm.rawValue)","typ":"\#(type.rawValue)","kid":"\#(key.keyID)"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The parts of a token whose signature has not yet been checked.
    public struct Unverified: Sendable {
        /// The `kid` in the header, naming the key to verify with.
        public let keyID: String
        /// The header's `alg`: only a key of this algorithm can verify the token.
        public let algorithm: Algorithm
        /// The header's `typ`, nil when it has none (or one that is not a string).
        public let type: String?
        /// The decoded claims JSON.
        public let claims: Data
        let signingInput: [UInt8]
        let signature: [UInt8]

        /// True when `key` signed this token, with the algorithm its header names.
        public func isSigned(by key: some JSONWebSigningKey) -> Bool {
            key.algorithm == algorithm && key.verify(signature, of: signingInput)
        }
    }

    /// Splits and decodes a token without trusting it.
    /// - Throws: `CryptoError.malformed` when it is not a compact JWS of one of ``Algorithm``'s
    ///   algorithms with a `kid`.
    public static func parse(_ token: String) throws(CryptoError) -> Unverified {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let claims = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let algorithm = (header["alg"] as? String).flatMap(Algorithm.init(rawValue:)), let kid = header["kid"] as? String
        else { throw .malformed("token") }
        return Unverified(
            keyID: kid, algorithm: algorithm, type: header["typ"] as? String, claims: Data(claims), signingInput: Array((parts[0] + "." + parts[1]).utf8),
            signature: signature)
    }
}
