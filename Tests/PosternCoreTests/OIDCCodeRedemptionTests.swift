import PosternCore
import Testing

/// What a token request must match of the code it redeems: the client, the identical redirect URI,
/// the PKCE verifier, the expiry; and no verifier for a code asked without a challenge.
@Suite("OIDC code redemption")
struct OIDCCodeRedemptionTests {
    // A verifier and its S256 challenge, base64url(SHA-256) as Python's hashlib computes it.
    static let verifier = "dBjftJeZ4CVP-mJ92K9x4fkzW6D1o2rO-wj2hCOEpPw"
    static let challenge = "46F6VZvT83h528MWifvCy-2AChkXCmRAWZp1jzSkTcE"

    static func code(challenge: String? = OIDCCodeRedemptionTests.challenge) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: [1], clientID: "app", uid: "u1", redirectURI: "http://127.0.0.1:49152/cb", scopes: ["openid"], nonce: "n",
            codeChallenge: challenge, authTime: 990, methods: ["link"], refreshFamily: "f", createdAt: 1_000, expiresAt: 1_060)
    }

    @Test("the right client, redirect URI and verifier before expiry redeem it")
    func redeemable() {
        #expect(Self.code().refusal(client: "app", redirectURI: "http://127.0.0.1:49152/cb", codeVerifier: Self.verifier, now: 1_059) == nil)
        #expect(Self.code(challenge: nil).refusal(client: "app", redirectURI: "http://127.0.0.1:49152/cb", codeVerifier: nil, now: 1_000) == nil)
    }

    @Test("each mismatch is refused, saying which", arguments: [
        ("app", "http://127.0.0.1:49152/cb", verifier, 1_060, AuthorizationCodeRecord.RedemptionRefusal.expired),
        ("other", "http://127.0.0.1:49152/cb", verifier, 1_000, .otherClient),
        ("App", "http://127.0.0.1:49152/cb", verifier, 1_000, .otherClient),
        // The token request repeats the authorization request's URI exactly: another loopback
        // port, a slash, a case or nothing at all is a mismatch here.
        ("app", "http://127.0.0.1:49153/cb", verifier, 1_000, .redirectURIMismatch),
        ("app", "http://127.0.0.1:49152/cb/", verifier, 1_000, .redirectURIMismatch),
        ("app", "http://127.0.0.1:49152/CB", verifier, 1_000, .redirectURIMismatch),
        ("app", nil, verifier, 1_000, .redirectURIMismatch),
        ("app", "http://127.0.0.1:49152/cb", nil, 1_000, .verifierMissing),
        ("app", "http://127.0.0.1:49152/cb", "", 1_000, .verifierMissing),
        ("app", "http://127.0.0.1:49152/cb", String(verifier.prefix(42)), 1_000, .verifierMissing),
        ("app", "http://127.0.0.1:49152/cb", verifier + " ", 1_000, .verifierMissing),
        // plain: the challenge itself sent as the verifier.
        ("app", "http://127.0.0.1:49152/cb", challenge, 1_000, .verifierMismatch),
        ("app", "http://127.0.0.1:49152/cb", String(repeating: "a", count: 43), 1_000, .verifierMismatch),
    ] as [(String, String?, String?, Int64, AuthorizationCodeRecord.RedemptionRefusal)])
    func refused(client: String, redirect: String?, verifier: String?, now: Int64, expected: AuthorizationCodeRecord.RedemptionRefusal) {
        #expect(Self.code().refusal(client: client, redirectURI: redirect, codeVerifier: verifier, now: now) == expected)
    }

    @Test("a verifier for a code asked without a challenge is a downgrade, refused")
    func downgrade() {
        #expect(Self.code(challenge: nil).refusal(client: "app", redirectURI: "http://127.0.0.1:49152/cb", codeVerifier: Self.verifier, now: 1_000)
            == .verifierWithoutChallenge)
    }
}
