import Foundation
import PosternAPI
import PosternCrypto

/// Why a proof of work's solution was refused (for the operator's log; the client is told only
/// that it must solve a new one).
public enum ChallengeRefusal: String, Sendable, Hashable, Error {
    /// Not base64 of a JSON object with the five fields of the right types.
    case malformed
    /// Not SHA-256, or a salt Postern does not mint.
    case unsupported
    /// Past its `expires`.
    case expired
    /// The number does not hash to the challenge, or the signature is not ours.
    case wrong
    /// A solution that was accepted before.
    case used
    /// The CAPTCHA service said no.
    case captchaRefused
    /// The CAPTCHA was solved on a host not in `--captcha-hostnames`.
    case captchaHostname
    /// The reCAPTCHA v3 score is below `--captcha-minimum-score`.
    case captchaScore
}

/// The built-in proof of work (issue 47): an HMAC-signed, expiring challenge in ALTCHA's classic
/// format, so a page can use the open-source ALTCHA widget as it is (its `challengeurl` is
/// `GET /v1/challenge`, the payload it submits is the `challenge` field of a request). Nothing is
/// stored when a challenge is minted; a solution is accepted once (the gate records it, see
/// ``ChallengeGate``). The work is SHA-256 hashing, half of `maxnumber` tries on average; the
/// check is one SHA-256 and one HMAC.
public struct ProofOfWork: Sendable {
    /// The kind name clients see.
    public static let kind = "altcha"

    let key: HMACKey
    let difficulty: Int64
    let lifetime: Int64

    /// Challenges signed with `key`, of at most `difficulty` tries, solvable for `lifetime` seconds.
    public init(key: HMACKey, difficulty: Int64, lifetime: Int64) {
        self.key = key
        self.difficulty = max(1, difficulty)
        self.lifetime = max(1, lifetime)
    }

    /// A new challenge, valid until `now + lifetime`.
    /// - Throws: `AuthError.internalError` when the random generator fails.
    public func mint(now: Int64) throws(AuthError) -> ProofOfWorkChallenge {
        let nonce: [UInt8]
        let pick: [UInt8]
        do {
            nonce = try SecureRandom.bytes(12)
            pick = try SecureRandom.bytes(8)
        } catch {
            throw .internalError("random generator: \(error)")
        }
        let number = Int64(pick.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % UInt64(difficulty + 1))
        let salt = "\(Hex.lower(nonce))?expires=\(FlowMath.adding(lifetime, to: now))&"
        let challenge = Hex.lower(SHA256.hash(salt + String(number)))
        return ProofOfWorkChallenge(
            algorithm: "SHA-256", challenge: challenge, maxnumber: difficulty, salt: salt,
            signature: Hex.lower(key.authenticate(Array(challenge.utf8))))
    }

    /// A solution the client sent: the ALTCHA payload (base64 of the JSON object with `algorithm`,
    /// `challenge`, `number`, `salt`, `signature`; `took` and others are ignored).
    /// - Returns: the key the solution is recorded under (SHA-256 of its challenge, kind-separated)
    ///   and when it expires.
    /// - Throws: why it is refused.
    public func verify(_ payload: String, now: Int64) throws(ChallengeRefusal) -> (onceKey: [UInt8], expiresAt: Int64) {
        guard payload.utf8.count <= 2048, let data = Data(base64Encoded: payload),
            let solution = try? JSONDecoder().decode(Solution.self, from: data)
        else { throw .malformed }
        let (challenge, number, salt) = (solution.challenge, solution.number, solution.salt)
        guard solution.algorithm == "SHA-256", let expires = Self.expiry(ofSalt: salt) else { throw .unsupported }
        guard number >= 0, number <= difficulty else { throw .wrong }
        guard expires >= now else { throw .expired }
        let expected = Hex.lower(SHA256.hash(salt + String(number)))
        guard ConstantTime.equals(Array(expected.utf8), Array(challenge.utf8)),
            ConstantTime.equals(Array(Hex.lower(key.authenticate(Array(challenge.utf8))).utf8), Array(solution.signature.utf8))
        else { throw .wrong }
        return (SHA256.hash("postern-challenge|altcha|" + challenge), expires)
    }

    /// The fields of a payload Postern reads (a whole number: `true` or `0.5` is malformed).
    private struct Solution: Decodable {
        let algorithm: String
        let challenge: String
        let number: Int64
        let salt: String
        let signature: String
    }

    /// The `expires` of a salt of the shape Postern mints (`<24 hex>?expires=<digits>&`); nil for
    /// any other shape (another parameter could not be signed by us: the signature covers only the
    /// challenge, so the salt's shape is held exactly).
    static func expiry(ofSalt salt: String) -> Int64? {
        let bytes = Array(salt.utf8)
        let prefix = Array("?expires=".utf8)
        guard bytes.count > 24 + prefix.count + 1, bytes.count <= 24 + prefix.count + 20 + 1, bytes.last == UInt8(ascii: "&"),
            bytes[0..<24].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            Array(bytes[24..<(24 + prefix.count)]) == prefix
        else { return nil }
        let digits = bytes[(24 + prefix.count)..<(bytes.count - 1)]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}
