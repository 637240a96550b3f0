import Foundation
import PosternCrypto
import Testing

@Suite("JWKS documents: public keys from their components")
struct JSONWebKeySetTests {
    /// A JWKS document holding `jwks` (the public JWKs of keys made here) and `extra` entries.
    private func document(_ jwks: [[String: String]], extra: [[String: String]] = []) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["keys": jwks + extra])
    }

    @Test("RS256 and ES256 public keys read from a JWKS verify what their private halves signed, and nothing else")
    func readsBothKinds() throws {
        let rsa = try RSASigningKey(generatingWithID: "r1")
        let ec = try SigningKey(generatingWithID: "e1")
        let set = try JSONWebKeySet(json: try document([rsa.publicJWK, ec.publicJWK]))
        #expect(set.keys.count == 2)
        let claims = Data(#"{"sub":"s"}"#.utf8)
        let rsaToken = try JSONWebToken.parse(try JSONWebToken.sign(claims: claims, with: rsa))
        let ecToken = try JSONWebToken.parse(try JSONWebToken.sign(claims: claims, with: ec))
        let rsaPublic = try #require(set.key(id: "r1", algorithm: .rs256))
        let ecPublic = try #require(set.key(id: "e1", algorithm: .es256))
        #expect(rsaToken.isSigned(by: rsaPublic) && ecToken.isSigned(by: ecPublic))
        #expect(!ecToken.isSigned(by: rsaPublic) && !rsaToken.isSigned(by: ecPublic))
        #expect(set.key(id: "r1", algorithm: .es256) == nil && set.key(id: "nope", algorithm: .rs256) == nil)
        // The public JWK round-trips: the same components come back out.
        #expect(rsaPublic.publicJWK == rsa.publicJWK && ecPublic.publicJWK == ec.publicJWK)
        // A key read from a JWKS only verifies.
        #expect(throws: CryptoError.self) { try rsaPublic.sign([1]) }
        #expect(throws: CryptoError.self) { try ecPublic.sign([1]) }
    }

    @Test("keys of kinds not used here are left out; bad components of a usable kind are refused")
    func skipsAndRefuses() throws {
        let ec = try SigningKey(generatingWithID: "e1")
        var encryption = ec.publicJWK
        encryption["use"] = "enc"
        var otherCurve = ec.publicJWK
        otherCurve["crv"] = "P-384"
        var noKid = ec.publicJWK
        noKid["kid"] = nil
        let skipped = try JSONWebKeySet(json: try document([encryption, otherCurve, noKid], extra: [["kty": "oct", "kid": "h", "k": "AAAA"]]))
        #expect(skipped.keys.isEmpty)
        var offCurve = ec.publicJWK
        offCurve["y"] = offCurve["x"]
        #expect(throws: CryptoError.self) { try JSONWebKeySet(json: try document([offCurve])) }
        var shortModulus = try RSASigningKey(generatingWithID: "r1").publicJWK
        shortModulus["n"] = Base64URL.encode([UInt8](repeating: 0xC5, count: 128))
        #expect(throws: CryptoError.self) { try JSONWebKeySet(json: try document([shortModulus])) }
        #expect(throws: CryptoError.self) { try JSONWebKeySet(json: Data("[]".utf8)) }
    }
}
