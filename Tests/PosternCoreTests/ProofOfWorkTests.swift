import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The proof of work's challenge and its check (``ProofOfWork``), and the attacker's forgeries.
@Suite("Proof of work (ALTCHA's format): mint, solve, verify, forge")
struct ProofOfWorkTests {
    static let now: Int64 = 1_800_000_000
    static func work(key: UInt8 = 1, difficulty: Int64 = 2_000, lifetime: Int64 = 300) throws -> ProofOfWork {
        ProofOfWork(key: try HMACKey(key: [UInt8](repeating: key, count: 32)), difficulty: difficulty, lifetime: lifetime)
    }

    static func json(_ payload: String) throws -> [String: Any] {
        let data = try #require(Data(base64Encoded: payload))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func encode(_ object: [String: Any]) throws -> String {
        try JSONSerialization.data(withJSONObject: object).base64EncodedString()
    }

    @Test("a minted challenge has ALTCHA's shape, its solution is accepted until it expires, and its once-key is the same for every spelling of the payload")
    func roundTrip() throws {
        let work = try Self.work()
        let challenge = try work.mint(now: Self.now)
        #expect(challenge.algorithm == "SHA-256" && challenge.maxnumber == 2_000)
        #expect(challenge.salt.hasSuffix("?expires=\(Self.now + 300)&") && challenge.salt.count == 24 + 9 + 10 + 1)
        #expect(challenge.challenge.count == 64 && challenge.signature.count == 64)
        let payload = try #require(ProofOfWorkSolver.payload(challenge))
        let accepted = try work.verify(payload, now: Self.now)
        #expect(accepted.expiresAt == Self.now + 300)
        #expect(try work.verify(payload, now: Self.now + 300).onceKey == accepted.onceKey)
        // Extra fields (the widget's `took`, anything else) do not change which solution it is.
        var object = try Self.json(payload)
        object["took"] = 12_345
        object["extra"] = "x"
        #expect(try work.verify(try Self.encode(object), now: Self.now).onceKey == accepted.onceKey)
        #expect(throws: ChallengeRefusal.expired) { try work.verify(payload, now: Self.now + 301) }
    }

    @Test("mints differ: another salt and number each time")
    func mintsDiffer() throws {
        let work = try Self.work()
        let challenges = try (0..<50).map { _ in try work.mint(now: Self.now) }
        #expect(Set(challenges.map(\.salt)).count == 50)
        #expect(Set(challenges.compactMap(ProofOfWorkSolver.solve)).count > 10, "numbers spread over 0…maxnumber")
    }

    @Test("attacker: a wrong number, another key's signature, a signature copied onto another challenge, a number past maxnumber or negative are refused as wrong")
    func forgeriesAreWrong() throws {
        let work = try Self.work()
        let challenge = try work.mint(now: Self.now)
        let number = try #require(ProofOfWorkSolver.solve(challenge))
        let wrongNumber = try #require(ProofOfWorkSolver.payload(challenge, number: (number + 1) % 2_001))
        #expect(throws: ChallengeRefusal.wrong) { try work.verify(wrongNumber, now: Self.now) }
        // A challenge minted by a daemon with another key.
        let foreign = try Self.work(key: 2).mint(now: Self.now)
        #expect(throws: ChallengeRefusal.wrong) { try work.verify(try #require(ProofOfWorkSolver.payload(foreign)), now: Self.now) }
        // The attacker picks an easy challenge of its own (number 0) and signs it with a signature it saw.
        let salt = "aaaaaaaaaaaaaaaaaaaaaaaa?expires=\(Self.now + 300)&"
        let own = ProofOfWorkChallenge(
            algorithm: "SHA-256", challenge: Hex.lower(SHA256.hash(salt + "0")), maxnumber: 1, salt: salt, signature: challenge.signature)
        #expect(throws: ChallengeRefusal.wrong) { try work.verify(try #require(ProofOfWorkSolver.payload(own)), now: Self.now) }
        var object = try Self.json(try #require(ProofOfWorkSolver.payload(challenge)))
        object["number"] = 2_001
        #expect(throws: ChallengeRefusal.wrong) { try work.verify(try Self.encode(object), now: Self.now) }
        object["number"] = -1
        #expect(throws: ChallengeRefusal.wrong) { try work.verify(try Self.encode(object), now: Self.now) }
        object["number"] = Double(number) + 0.5
        #expect(throws: ChallengeRefusal.malformed) { try work.verify(try Self.encode(object), now: Self.now) }
    }

    @Test("attacker: a salt of another shape is refused before any hash — a later expiry spliced in, a second parameter, no closing &, upper-case hex")
    func saltShapes() throws {
        let work = try Self.work()
        let challenge = try work.mint(now: Self.now)
        let nonce = String(challenge.salt.prefix(24))
        for salt in [
            "\(nonce)?expires=\(Self.now + 300)", "\(nonce)?expires=\(Self.now + 300)&expires=9999999999&",
            "\(nonce)?expires=\(Self.now + 300)&x=1&", "\(nonce.uppercased())?expires=\(Self.now + 300)&", "\(nonce)?expires=&",
            "\(nonce)?expires=-5&", "\(nonce)&", String(nonce.dropFirst()) + "?expires=\(Self.now + 300)&",
            "\(nonce)?expires=99999999999999999999999&",
        ] {
            let payload = try #require(ProofOfWorkSolver.payload(challenge, number: 0, salt: salt))
            #expect(throws: ChallengeRefusal.unsupported, "salt \(salt)") { try work.verify(payload, now: Self.now) }
        }
    }

    @Test("garbage is malformed, never a crash: not base64, not JSON, missing fields, wrong types, a boolean number, 3 KiB")
    func garbage() throws {
        let work = try Self.work()
        let challenge = try work.mint(now: Self.now)
        let good = try Self.json(try #require(ProofOfWorkSolver.payload(challenge)))
        var cases = ["", "not base64!", Data("not json".utf8).base64EncodedString(), Data("[1,2]".utf8).base64EncodedString(),
                     String(repeating: "A", count: 3_000)]
        for field in ["algorithm", "challenge", "number", "salt", "signature"] {
            var object = good
            object.removeValue(forKey: field)
            cases.append(try Self.encode(object))
            object[field] = ["nested": true]
            cases.append(try Self.encode(object))
        }
        var boolean = good
        boolean["number"] = true
        cases.append(try Self.encode(boolean))
        for payload in cases {
            #expect(throws: ChallengeRefusal.malformed, "\(payload.prefix(40))") { try work.verify(payload, now: Self.now) }
        }
        var sha1 = good
        sha1["algorithm"] = "SHA-1"
        #expect(throws: ChallengeRefusal.unsupported) { try work.verify(try Self.encode(sha1), now: Self.now) }
    }
}
