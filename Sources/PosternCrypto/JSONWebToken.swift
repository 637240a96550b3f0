import Foundation

/// Compact JWS (RFC 7515) with ES256 over a JSON claims object.
public enum JSONWebToken {
    /// The header's `typ`: what kind of token it is, so that a verifier of one kind refuses the
    /// other even when the same key signed both (RFC 8725 §3.11).
    public enum TokenType: String, Sendable, Hashable {
        /// An ID token (the API's sessions, OpenID Connect's ID tokens).
        case jwt = "JWT"
        /// An OAuth access token (RFC 9068 §2.1).
        case accessToken = "at+jwt"
    }

    /// Signs `claims` (a JSON object, already encoded) with `key`: `header.payload.signature`,
    /// with `type` as the header's `typ`.
    /// - Throws: `CryptoError` when signing fails.
    public static func sign(claims: Data, with key: SigningKey, type: TokenType = .jwt) throws(CryptoError) -> String {
        let header = #"{"alg":"ES256","typ":"\#(type.rawValue)","kid":"\#(key.keyID)"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The parts of a token whose signature has not yet been checked.
    public struct Unverified: Sendable {
        /// The `kid` in the header, naming the key to verify with.
        public let keyID: String
        /// The header's `typ`, nil when it has none (or one that is not a string).
        public let type: String?
        /// The decoded claims JSON.
        public let claims: Data
        let signingInput: [UInt8]
        let signature: [UInt8]

        /// True when `key` signed this token.
        public func isSigned(by key: SigningKey) -> Bool { key.verify(signature, of: signingInput) }
    }

    /// Splits and decodes a token without trusting it.
    /// - Throws: `CryptoError.malformed` when it is not an ES256 compact JWS.
    public static func parse(_ token: String) throws(CryptoError) -> Unverified {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let claims = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", let kid = header["kid"] as? String
        else { throw .malformed("token") }
        return Unverified(
            keyID: kid, type: header["typ"] as? String, claims: Data(claims), signingInput: Array((parts[0] + "." + parts[1]).utf8),
            signature: signature)
    }
}
