import Foundation
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

    /// The number whose hash is the challenge, nil when none up to `maxnumber` is.
    public static func solve(_ challenge: ProofOfWorkChallenge) -> Int64? {
        for number in 0...challenge.maxnumber where Hex.lower(SHA256.hash(challenge.salt + String(number))) == challenge.challenge {
            return number
        }
        return nil
    }
}
