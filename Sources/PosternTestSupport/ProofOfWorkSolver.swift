import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

/// Solves a proof of work as a client does (by trying every number), for tests: the ALTCHA payload
/// to send as `challengeSolution`. Tests keep the difficulty small.
public enum ProofOfWorkSolver {
    /// The payload for `challenge`, with `number` replaced when given (a wrong solution).
    public static func payload(_ challenge: ProofOfWorkChallenge, number: Int64? = nil, salt: String? = nil, signature: String? = nil) -> String? {
        guard let found = number ?? solve(challenge) else { return nil }
        let object: [String: Any] = [
            "algorithm": challenge.algorithm, "challenge": challenge.challenge, "number": found,
            "salt": salt ?? challenge.salt, "signature": signature ?? challenge.signature, "took": 1,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return nil }
        return data.base64EncodedString()
    }

    /// The number whose hash is the challenge, nil when none up to `maxnumber` is: tried from 0 as
    /// ALTCHA's widget does, the digest compared as bytes (so the loop costs what the hashing costs,
    /// as `bench/challenge` measures it).
    public static func solve(_ challenge: ProofOfWorkChallenge) -> Int64? {
        let hex = Array(challenge.challenge.utf8)
        guard hex.count == 64, hex.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        func nibble(_ c: UInt8) -> UInt8 { c >= 0x61 ? c - 0x61 + 10 : c - 0x30 }
        let target = (0..<32).map { nibble(hex[2 * $0]) << 4 | nibble(hex[2 * $0 + 1]) }
        for number in 0...max(0, challenge.maxnumber) where SHA256.hash(challenge.salt + String(number)) == target {
            return number
        }
        return nil
    }
}
