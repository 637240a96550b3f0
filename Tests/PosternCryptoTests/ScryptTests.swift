import PosternCrypto
import Testing

@Suite("scrypt password hashing")
struct ScryptTests {
    struct Vector: Sendable {
        let password: String, salt: String, n: UInt64, r: UInt64, p: UInt64, hex: String
    }

    // RFC 7914 §12.
    static let vectors: [Vector] = [
        Vector(password: "", salt: "", n: 16, r: 1, p: 1,
               hex: "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        Vector(password: "password", salt: "NaCl", n: 1024, r: 8, p: 16,
               hex: "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        Vector(password: "pleaseletmein", salt: "SodiumChloride", n: 16384, r: 8, p: 1,
               hex: "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
        Vector(password: "pleaseletmein", salt: "SodiumChloride", n: 1_048_576, r: 8, p: 1,
               hex: "2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa478e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4"),
    ]

    @Test("matches the RFC 7914 §12 test vectors", arguments: vectors)
    func rfcVectors(_ v: Vector) throws {
        let out = try PasswordHasher.derive(
            password: Array(v.password.utf8), salt: Array(v.salt.utf8), n: v.n, r: v.r, p: v.p, length: 64)
        #expect(out.map { String(format: "%02x", $0) }.joined() == v.hex)
    }

    @Test("a PHC string verifies its password and no other")
    func phcRoundTrip() throws {
        let hasher = PasswordHasher(logN: 10, blockSize: 8, parallelism: 1)
        let encoded = try hasher.hash("correct horse battery staple")
        #expect(encoded.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try PasswordHasher.verify("correct horse battery staple", against: encoded))
        #expect(try !PasswordHasher.verify("correct horse battery stapler", against: encoded))
        #expect(try hasher.hash("same") != hasher.hash("same"), "salts must differ")
    }

    @Test("old parameters still verify and are flagged for rehash")
    func parametersCanBeRaised() throws {
        let old = try PasswordHasher(logN: 8, blockSize: 8, parallelism: 1).hash("pw-123456")
        let current = PasswordHasher(logN: 10, blockSize: 8, parallelism: 1)
        #expect(try PasswordHasher.verify("pw-123456", against: old))
        #expect(current.needsRehash(old))
        #expect(!current.needsRehash(try current.hash("pw-123456")))
    }

    @Test("malformed hash strings are refused, not trusted", arguments: [
        "", "$scrypt$", "$bcrypt$ln=10,r=8,p=1$c2FsdA$aGFzaA", "$scrypt$ln=99,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
        "$scrypt$ln=10,r=8$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$scrypt$ln=10,r=8,p=1$!!$aGFzaGhhc2hoYXNoaGFzaA",
    ])
    func malformed(_ encoded: String) {
        #expect(throws: CryptoError.self) { try PasswordHasher.verify("x", against: encoded) }
    }
}
