import Foundation
import PosternCrypto
import Testing

@Suite("RS256 JWT and JWKS")
struct RSASigningKeyTests {
    /// One generated key for the suite: a 2048-bit key takes a tenth of a second or more to make.
    static let key: RSASigningKey? = try? RSASigningKey(generatingWithID: "r1")

    @Test("an RS256 token verifies with its key, survives a PKCS#8 DER round trip, and fails when altered")
    func signAndVerify() throws {
        let key = try #require(Self.key)
        let claims = Data(#"{"sub":"u1","exp":2000000000}"#.utf8)
        let token = try JSONWebToken.sign(claims: claims, with: key)
        let headerPart = try #require(token.split(separator: ".").first)
        let header = try #require(Base64URL.decode(headerPart))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"RS256","typ":"JWT","kid":"r1"}"#)
        let parsed = try JSONWebToken.parse(token)
        #expect(parsed.keyID == "r1" && parsed.algorithm == .rs256 && parsed.claims == claims)
        #expect(parsed.isSigned(by: key))
        let der = try key.privateKeyDER()
        // PKCS#8 PrivateKeyInfo: a SEQUENCE holding version 0, then the rsaEncryption AlgorithmIdentifier.
        let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
        #expect(der.first == 0x30 && der.starts(with: [0x30, 0x82]) && Array(der[4..<7]) == [0x02, 0x01, 0x00])
        #expect(Array(der[9..<20]) == rsaEncryption)
        let restored = try RSASigningKey(privateKeyDER: der, keyID: "r1")
        #expect(parsed.isSigned(by: restored))
        #expect(restored.publicJWK == key.publicJWK)
        #expect(!parsed.isSigned(by: try RSASigningKey(generatingWithID: "r1")))
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"sub":"admin","exp":2000000000}"#.utf8))
        #expect(!(try JSONWebToken.parse(parts.joined(separator: "."))).isSigned(by: key))
    }

    @Test("signatures are RSASSA-PKCS1-v1_5: as long as the modulus, the same for the same input; another length is refused")
    func pkcs1v15() throws {
        let key = try #require(Self.key)
        let message = Array("header.payload".utf8)
        let signature = try key.sign(message)
        #expect(signature.count == 256)
        // PSS would salt each signature; PKCS#1 v1.5 is deterministic.
        #expect(try key.sign(message) == signature)
        #expect(key.verify(signature, of: message))
        #expect(!key.verify([0] + signature, of: message), "a leading zero byte makes it another length")
        #expect(!key.verify(Array(signature.dropFirst()), of: message))
        #expect(!key.verify([], of: message))
        #expect(!key.verify(signature, of: Array("header.payloaD".utf8)))
    }

    @Test("the public JWK: kty RSA, a 2048-bit modulus, exponent 65537, kid, alg RS256, use sig")
    func publicJWK() throws {
        let key = try #require(Self.key)
        let jwk = key.publicJWK
        #expect(Set(jwk.keys) == ["kty", "n", "e", "kid", "alg", "use"])
        #expect(jwk["kty"] == "RSA" && jwk["alg"] == "RS256" && jwk["use"] == "sig" && jwk["kid"] == "r1")
        #expect(jwk["e"] == "AQAB")
        let modulus = try #require(jwk["n"].flatMap { Base64URL.decode($0) })
        #expect(modulus.count == 256 && modulus[0] >= 0x80, "2048 bits, no leading zero byte")
    }

    @Test("a token verifies only under a key of the algorithm its header names; other algorithms are refused")
    func algorithmIsTheKeys() throws {
        let rsa = try #require(Self.key)
        let ec = try SigningKey(generatingWithID: "r1")
        let claims = Data(#"{"sub":"u1"}"#.utf8)
        let rsaToken = try JSONWebToken.sign(claims: claims, with: rsa)
        let ecToken = try JSONWebToken.sign(claims: claims, with: ec)
        #expect(try JSONWebToken.parse(ecToken).algorithm == .es256)
        #expect(!(try JSONWebToken.parse(rsaToken)).isSigned(by: ec))
        #expect(!(try JSONWebToken.parse(ecToken)).isSigned(by: rsa))
        // The header relabelled: the RSA signature under an ES256 header, and the reverse.
        func relabelled(_ token: String, _ alg: String) -> String {
            var parts = token.split(separator: ".").map(String.init)
            parts[0] = Base64URL.encode(Array(#"{"alg":"\#(alg)","typ":"JWT","kid":"r1"}"#.utf8))
            return parts.joined(separator: ".")
        }
        let rsaAsEC = try JSONWebToken.parse(relabelled(rsaToken, "ES256"))
        #expect(!rsaAsEC.isSigned(by: rsa) && !rsaAsEC.isSigned(by: ec))
        let ecAsRSA = try JSONWebToken.parse(relabelled(ecToken, "RS256"))
        #expect(!ecAsRSA.isSigned(by: rsa) && !ecAsRSA.isSigned(by: ec))
        for alg in ["HS256", "none", "PS256", "RS384", "rs256"] {
            #expect(throws: CryptoError.self, "alg \(alg)") { try JSONWebToken.parse(relabelled(rsaToken, alg)) }
        }
    }

    @Test("only an RSA private key of at least 2048 bits opens: not garbage, not a P-256 key, not a 1024-bit key")
    func refusedKeys() throws {
        let rsa = try #require(Self.key)
        #expect(throws: CryptoError.self) { try RSASigningKey(privateKeyDER: [1, 2, 3], keyID: "x") }
        #expect(throws: CryptoError.self) { try RSASigningKey(privateKeyDER: try SigningKey(generatingWithID: "e").privateKeyDER(), keyID: "x") }
        #expect(throws: CryptoError.self) { try SigningKey(privateKeyDER: try rsa.privateKeyDER(), keyID: "x") }
        let small = try #require(Data(base64Encoded: Self.rsa1024PKCS8.joined()))
        #expect(throws: CryptoError.malformed("RSA signing key (not RSA, or under 2048 bits)")) {
            try RSASigningKey(privateKeyDER: Array(small), keyID: "x")
        }
    }

    /// A 1024-bit RSA key, PKCS#8 DER (`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -outform DER`).
    static let rsa1024PKCS8 = [
            "MIICXQIBAAKBgQDRc5vkKPHWSvXSBQjUf/Hp4KSa6QMl5ehjSF0AbXSDIZ0QDlommyRKnjrRbKc9gpggSdaQu7/08SgefsT1",
            "e4SVZZCmU0Dn8F2XY5xTFdWGzbK6io6SYHJWFVUhPzbsfmiloyfFLVyARNnefQiRYpbHo1AxFgfxK1LXE1g6SYWjewIDAQAB",
            "AoGAGNXnhz9fpbRPv65/JItjSQMtIX09tVG0o4kiFfnkleP3dr7s66T7walPeiOzFPUWSsXWnmTU1xt9UVhgzGbwCnvqOdBP",
            "KPuH6S6frJACNSsspLpBbutqOLuE1wNU4dwMt8JIG3R95VHd5PVJrra86TgO0lM1g9rUF40MnI8j0rECQQD4h4dUN55UAnNt",
            "AI73gLUKtsIU0l4eOcduwn6ZaxztxevflmYSce/WIVo+vAJByUvtZoQMD6OehiyRixSmniIJAkEA179e41UDjRtfTxkbqJFU",
            "bxWrV/t7Wsqv/15Feq1dfFLgzSifF/kISXSHK1XyopPVnPDP29JzBx5aJ4g+QMEqYwJBAL1f+DyyDNES9QUwEcCCsHEzhXv8",
            "OH9ro43AYlthBTAhSnSa07hmXUybKXr4I/gg/Nwu65uNJy4aK0fT5K55fJECQQDAXHe9F7Kn4Iz1GHzpqlJvDRINy0Lr66ZK",
            "eYJXZDXjQH4BTkOzey4hWE2gnOxOeqNOYAPkilpXMX/OmZJv6ArjAkB1S24LLGXU40+teYkiRaae0hfoj9H31Y2OJZEUbFfw",
            "fmwLg2klR2/D91vXxYntGJTYVul3c292uy66vtPZEEZk",
    ]
}
