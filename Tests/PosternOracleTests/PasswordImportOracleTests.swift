import Foundation
import PosternCrypto
import Testing

/// Imported password hashes checked against independent implementations: Firebase's modified
/// scrypt against the `firebase-scrypt` PyPI package (and the answer Firebase publishes with its
/// scrypt tool), bcrypt against Python's `bcrypt` package.
@Suite("Imported password hashes against Python oracles")
struct PasswordImportOracleTests {
    /// The example of github.com/firebase/scrypt's README.
    static let publishedSignerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="

    private struct FirebaseCase: Decodable {
        let password: String
        let salt: String
        let separator: String
        let signerKey: String
        let rounds: Int
        let memCost: Int
        let hash: String
    }

    private func bytes(_ base64: String) throws -> [UInt8] {
        try #require(Data(base64Encoded: base64).map { Array($0) })
    }

    @Test("Firebase's published example: user1password verifies, another password does not")
    func firebasePublishedAnswer() throws {
        let parameters = try FirebaseHashParameters(
            signerKey: try bytes(Self.publishedSignerKey), saltSeparator: try bytes("Bw=="), rounds: 8, memCost: 14)
        let expected = try bytes("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")
        let salt = try bytes("42xEC+ixf3L2lw==")
        #expect(try FirebaseScrypt.hash(password: "user1password", salt: salt, parameters: parameters) == expected)
        #expect(try FirebaseScrypt.verify("user1password", salt: salt, expected: expected, parameters: parameters))
        #expect(try !FirebaseScrypt.verify("user1passwore", salt: salt, expected: expected, parameters: parameters))
    }

    @Test("firebase-scrypt's hashes verify here through the stored PHC string; wrong passwords do not")
    func firebaseAgainstPython() throws {
        let script = """
            import base64, json, os, sys
            import firebase_scrypt as fs
            cases = []
            for i, (rounds, mem) in enumerate([(8, 14), (8, 14), (1, 1), (4, 10), (2, 12)]):
                password = ["user1password", "pässwörd ☃", "", "x" * 100, "Tr0ub4dor&3"][i]
                salt = base64.b64encode(os.urandom(10 + i)).decode()
                sep = base64.b64encode(os.urandom(i % 3)).decode()
                key = base64.b64encode(os.urandom(64)).decode()
                derived = fs.generate_derived_key(password, salt, sep, rounds, mem)
                hashed = base64.b64encode(fs.encrypt(base64.b64decode(key), derived)).decode()
                assert fs.verify_password(password, hashed, salt, sep, key, rounds, mem)
                cases.append(dict(password=password, salt=salt, separator=sep, signerKey=key, rounds=rounds, memCost=mem, hash=hashed))
            print(json.dumps(cases))
            """
        let output = try runPython(script, arguments: [])
        try #require(output.status == 0, "firebase-scrypt said: \(output.text)")
        let cases = try JSONDecoder().decode([FirebaseCase].self, from: Data(output.text.utf8))
        #expect(cases.count == 5)
        for (index, item) in cases.enumerated() {
            let keyID = UInt32(100 + index)
            let stored = FirebaseStoredHash(
                keyID: keyID, rounds: item.rounds, memCost: item.memCost, saltSeparator: try bytes(item.separator),
                salt: try bytes(item.salt), hash: try bytes(item.hash))
            #expect(try FirebaseStoredHash(stored.encoded) == stored)
            #expect(PasswordScheme(of: stored.encoded) == .firebaseScrypt)
            let verifier = PasswordVerifier(firebaseSignerKeys: [keyID: try bytes(item.signerKey)])
            #expect(try verifier.verify(item.password, against: stored.encoded), "case \(index)")
            #expect(try !verifier.verify(item.password + "!", against: stored.encoded), "case \(index)")
            // Another project's key (or none) never verifies.
            let otherKey = PasswordVerifier(firebaseSignerKeys: [keyID: try SecureRandom.bytes(64)])
            #expect(try !otherKey.verify(item.password, against: stored.encoded))
            #expect(throws: CryptoError.self) { try PasswordVerifier().verify(item.password, against: stored.encoded) }
        }
    }

    @Test("Python bcrypt's $2a$ and $2b$ hashes verify through crypt_r; wrong passwords do not")
    func bcryptAgainstPython() throws {
        let script = """
            import bcrypt, json
            out = []
            for prefix, password in [(b"2a", "correct horse"), (b"2b", "pässwörd ☃"), (b"2b", "a" * 72), (b"2a", "")]:
                h = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4, prefix=prefix)).decode()
                out.append([password, h])
            print(json.dumps(out))
            """
        let output = try runPython(script, arguments: [])
        try #require(output.status == 0, "bcrypt said: \(output.text)")
        let cases = try JSONDecoder().decode([[String]].self, from: Data(output.text.utf8))
        #expect(cases.count == 4)
        let verifier = PasswordVerifier()
        for item in cases {
            let (password, hash) = (item[0], item[1])
            #expect(PasswordScheme(of: hash) == .bcrypt)
            #expect(try verifier.verify(password, against: hash), "\(hash.prefix(4))")
            #expect(try !verifier.verify(password + "x", against: hash) || password.utf8.count >= 72)
            #expect(try !verifier.verify("wrong", against: hash))
            #expect(try !verifier.verify(password + "\u{0}", against: hash))
        }
        #expect(throws: CryptoError.self) { try Bcrypt.verify("x", against: "$2b$10$short") }
    }
}
