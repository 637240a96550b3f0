import Foundation
import PosternCrypto
import Testing

@Suite("HMAC, SHA-256, base64url, random, constant-time compare, sealed secrets")
struct PrimitiveTests {
    @Test("HMAC-SHA256 matches RFC 4231 test case 2, repeatedly and from many threads")
    func hmacVector() async throws {
        let key = try HMACKey(key: Array("Jefe".utf8))
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        let message = Array("what do ya want for nothing?".utf8)
        #expect(hex(key.authenticate(message)) == expected)
        #expect(hex(key.authenticate(message)) == expected, "a reused context must be re-initialised")
        await withTaskGroup(of: String.self) { group in
            for _ in 0..<32 { group.addTask { hex(key.authenticate(message)) } }
            for await tag in group { #expect(tag == expected) }
        }
    }

    @Test("SHA-256 of abc")
    func sha256() {
        #expect(hex(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("base64url round-trips every length and refuses non-canonical or foreign text")
    func base64url() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("_-8") == [0xFF, 0xEF])
        #expect(Base64URL.decode("_-9") == nil, "trailing bits must be zero")
        #expect(Base64URL.decode("ab+/") == nil)
        #expect(Base64URL.decode("a") == nil)
    }

    @Test("random bytes differ and uniform stays below its bound")
    func random() throws {
        #expect(try SecureRandom.bytes(16) != SecureRandom.bytes(16))
        for _ in 0..<1000 { #expect(try SecureRandom.uniform(below: 7) < 7) }
    }

    @Test("constant-time compare")
    func compare() {
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
    }

    @Test("a sealed secret opens only with its key and context, and not after tampering")
    func secretBox() throws {
        let box = try SecretBox(key: SecureRandom.bytes(32))
        let secret = try SecureRandom.bytes(32)
        let sealed = try box.seal(secret, context: Array("action-code:7".utf8))
        #expect(try box.open(sealed, context: Array("action-code:7".utf8)) == secret)
        #expect(throws: CryptoError.authenticationFailed) { try box.open(sealed, context: Array("action-code:8".utf8)) }
        var altered = sealed
        altered[20] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try box.open(altered, context: Array("action-code:7".utf8)) }
        let other = try SecretBox(key: SecureRandom.bytes(32))
        #expect(throws: CryptoError.authenticationFailed) { try other.open(sealed, context: Array("action-code:7".utf8)) }
        #expect(throws: CryptoError.self) { try SecretBox(key: [1, 2, 3]) }
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
