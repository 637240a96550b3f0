import Foundation

/// Compact JWS (RFC 7515) with ES256 over a JSON claims object.
public enum JSONWebToken {
    /// Signs `claims` (a JSON object, already encoded) with `key`: `header.payload.signature`.
    /// - Throws: `CryptoError` when signing fails.
    public static func sign(claims: Data, with key: SigningKey) throws(CryptoError) -> String {
        let header = #"{"alg":"ES256","typ":"JWT","kid":"\#(key.keyID)"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The parts of a token whose signature has not yet been checked.
    public struct Unverified: Sendable {
        /// The `kid` in the header, naming the key to verify with.
        public let keyID: String
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
            keyID: kid, claims: Data(claims), signingInput: Array((parts[0] + "." + parts[1]).utf8),
            signature: signature)
    }
}
