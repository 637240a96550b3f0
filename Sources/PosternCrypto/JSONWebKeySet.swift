import Foundation

/// The signature keys of a JWKS document (RFC 7517 §5), such as an identity provider publishes at
/// its `jwks_uri`: RSA keys (`n`, `e`) verify RS256, EC P-256 keys (`x`, `y`) verify ES256.
///
/// Keys this package cannot use are left out rather than refused, so that one new kind of key in
/// a provider's set does not stop the others from working: another `kty` or curve, `use` other
/// than `sig`, an `alg` that is not the key type's, no `kid`.
public struct JSONWebKeySet: Sendable {
    /// The usable keys, in the document's order.
    public let keys: [any JSONWebSigningKey]

    /// A set of keys already made (tests, and the keys of a provider configured in code).
    public init(keys: [any JSONWebSigningKey]) { self.keys = keys }

    /// Reads a JWKS document.
    /// - Throws: `CryptoError.malformed` when it is not a JSON object with a `keys` array, or a
    ///   key of a usable kind has components that are not a valid public key.
    public init(json: Data) throws(CryptoError) {
        guard let document = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let entries = document["keys"] as? [Any]
        else { throw .malformed("JWKS") }
        var keys: [any JSONWebSigningKey] = []
        for case let entry as [String: Any] in entries {
            if let key = try Self.key(entry) { keys.append(key) }
        }
        self.keys = keys
    }

    /// The key named `keyID` that verifies `algorithm`, if the set has one.
    public func key(id keyID: String, algorithm: JSONWebToken.Algorithm) -> (any JSONWebSigningKey)? {
        keys.first { $0.keyID == keyID && $0.algorithm == algorithm }
    }

    /// The verifying key of one JWK, nil when it is not a signature key this package uses.
    private static func key(_ jwk: [String: Any]) throws(CryptoError) -> (any JSONWebSigningKey)? {
        guard let kid = jwk["kid"] as? String, !kid.isEmpty else { return nil }
        if let use = jwk["use"], use as? String != "sig" { return nil }
        let alg = jwk["alg"] as? String
        switch jwk["kty"] as? String {
        case "RSA":
            guard alg == nil || alg == JSONWebToken.Algorithm.rs256.rawValue else { return nil }
            guard let n = (jwk["n"] as? String).flatMap(Base64URL.decode), let e = (jwk["e"] as? String).flatMap(Base64URL.decode) else {
                throw .malformed("JWKS RSA key")
            }
            return try RSASigningKey(publicModulus: n, exponent: e, keyID: kid)
        case "EC":
            guard jwk["crv"] as? String == "P-256", alg == nil || alg == JSONWebToken.Algorithm.es256.rawValue else { return nil }
            guard let x = (jwk["x"] as? String).flatMap(Base64URL.decode), let y = (jwk["y"] as? String).flatMap(Base64URL.decode) else {
                throw .malformed("JWKS EC key")
            }
            return try SigningKey(publicX: x, y: y, keyID: kid)
        default:
            return nil
        }
    }
}
