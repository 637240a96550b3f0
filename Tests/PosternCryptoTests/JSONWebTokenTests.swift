import Foundation
import PosternCrypto
import Testing

@Suite("ES256 JWT and JWKS")
struct JSONWebTokenTests {
    @Test("a token verifies with its key, survives a DER round trip, and fails when altered")
    func signAndVerify() throws {
        let key = try SigningKey(generatingWithID: "k1")
        let claims = Data(#"{"sub":"u1","exp":2000000000}"#.utf8)
        let token = try JSONWebToken.sign(claims: claims, with: key)
        let parsed = try JSONWebToken.parse(token)
        #expect(parsed.keyID == "k1" && parsed.type == "JWT")
        #expect(parsed.claims == claims)
        #expect(try JSONWebToken.parse(try JSONWebToken.sign(claims: claims, with: key, type: .accessToken)).type == "at+jwt")
        #expect(parsed.isSigned(by: key))
        let restored = try SigningKey(privateKeyDER: key.privateKeyDER(), keyID: "k1")
        #expect(parsed.isSigned(by: restored))
        #expect(!parsed.isSigned(by: try SigningKey(generatingWithID: "k2")))
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"sub":"admin","exp":2000000000}"#.utf8))
        #expect(!(try JSONWebToken.parse(parts.joined(separator: "."))).isSigned(by: key))
        #expect(throws: CryptoError.self) { try JSONWebToken.parse("a.b") }
        #expect(throws: CryptoError.self) { try SigningKey(privateKeyDER: [1, 2, 3], keyID: "x") }
    }

    @Test("signatures are low-S, and the high-S twin (r, n − s) of a valid signature is refused")
    func lowS() throws {
        let key = try SigningKey(generatingWithID: "k1")
        // n and ⌊n/2⌋ of P-256, written out here independently of the implementation.
        let n: [UInt8] = Array(hex: "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
        let half: [UInt8] = Array(hex: "7FFFFFFF800000007FFFFFFFFFFFFFFFDE737D56D38BCF4279DCE5617E3192A8")
        for index in 0..<64 {
            let token = try JSONWebToken.sign(claims: Data(#"{"sub":"u\#(index)"}"#.utf8), with: key)
            let parsed = try JSONWebToken.parse(token)
            let parts = token.split(separator: ".").map(String.init)
            let signature = try #require(Base64URL.decode(parts[2]))
            let s = Array(signature[32...])
            #expect(!half.lexicographicallyPrecedes(s), "s is at most n/2")
            #expect(parsed.isSigned(by: key))
            // n − s, big-endian subtraction.
            var twin = [UInt8](repeating: 0, count: 32)
            var borrow = 0
            for position in stride(from: 31, through: 0, by: -1) {
                let difference = Int(n[position]) - Int(s[position]) - borrow
                twin[position] = UInt8((difference + 256) % 256)
                borrow = difference < 0 ? 1 : 0
            }
            let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(signature[..<32]) + twin)
            #expect(!(try JSONWebToken.parse(forged)).isSigned(by: key), "the high-S twin must not verify")
        }
    }
}

extension Array where Element == UInt8 {
    /// Bytes from hexadecimal text (test constants only).
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }
}
