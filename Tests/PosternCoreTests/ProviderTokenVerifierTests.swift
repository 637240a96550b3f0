import Foundation
import PosternCore
import PosternCrypto
import Testing

/// Issue 46 point 8's bad tokens, each refused for its own reason, against keys made here.
@Suite("A provider's ID token: what is accepted and each bad token refused")
struct ProviderTokenVerifierTests {
    let now: Int64 = 1_800_000_000
    let rsa: RSASigningKey
    let ec: SigningKey
    let keys: JSONWebKeySet
    let provider: IdentityProvider
    let apple: IdentityProvider
    let google: IdentityProvider

    init() throws {
        rsa = try RSASigningKey(generatingWithID: "r1")
        ec = try SigningKey(generatingWithID: "e1")
        // The verifier sees only what a provider publishes: the keys as they come out of a JWKS.
        keys = try JSONWebKeySet(json: JSONSerialization.data(withJSONObject: ["keys": [rsa.publicJWK, ec.publicJWK]]))
        let providers = try IdentityProvider.parseList(
            Data(
                """
                [{"id": "corp", "issuer": "https://idp.example", "audiences": ["postern", "other"]},
                 {"id": "apple", "audiences": ["com.example.app"]},
                 {"id": "google", "audiences": ["123.apps.googleusercontent.com"]}]
                """.utf8))
        provider = providers[0]
        apple = providers[1]
        google = providers[2]
    }

    /// Claims that `provider` accepts at `now`, with `changes` applied (nil removes a claim).
    func claims(_ changes: [String: Any?] = [:]) throws -> Data {
        var claims: [String: Any] = [
            "iss": "https://idp.example", "aud": "postern", "sub": "subject-1", "iat": now - 10, "exp": now + 600,
            "email": "ada@example.com", "email_verified": true,
        ]
        for (name, value) in changes { claims[name] = value ?? nil }
        return try JSONSerialization.data(withJSONObject: claims)
    }

    func verify(_ token: String, provider: IdentityProvider? = nil, nonce: String? = nil) throws(ProviderTokenRefusal) -> ProviderIdentity {
        try ProviderTokenVerifier.verify(token, keys: keys, provider: provider ?? self.provider, now: now, nonce: nonce)
    }

    func refusal(_ token: String, provider: IdentityProvider? = nil, nonce: String? = nil) -> ProviderTokenRefusal? {
        #expect(throws: ProviderTokenRefusal.self) { try verify(token, provider: provider, nonce: nonce) }
    }

    /// `header.payload.signature` put together by hand, for tokens no key of ours would sign.
    func assemble(header: String, claims: Data, signature: [UInt8]) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claims) + "." + Base64URL.encode(signature)
    }

    @Test("RS256 and ES256 tokens are accepted, with subject, address and whether it is verified")
    func accepted() throws {
        let identity = try verify(JSONWebToken.sign(claims: claims(), with: rsa))
        #expect(identity == ProviderIdentity(provider: "corp", subject: "subject-1", email: "ada@example.com", emailVerified: true, expiresAt: now + 600))
        let viaEC = try verify(JSONWebToken.sign(claims: claims(["aud": ["elsewhere", "other"], "azp": "other", "email_verified": false]), with: ec))
        #expect(viaEC.subject == "subject-1" && !viaEC.emailVerified)
        // Inside the 60 s skew on both ends.
        #expect(throws: Never.self) { try verify(JSONWebToken.sign(claims: claims(["exp": now - 59, "iat": now + 60]), with: rsa)) }
        let noEmail = try verify(JSONWebToken.sign(claims: claims(["email": nil]), with: rsa))
        #expect(noEmail.email == nil && !noEmail.emailVerified)
    }

    @Test("a forged token (signed by another key under the same kid, or altered after signing) is refused")
    func forged() throws {
        let impostor = try RSASigningKey(generatingWithID: "r1")
        #expect(refusal(try JSONWebToken.sign(claims: claims(), with: impostor)) == .badSignature)
        var parts = try JSONWebToken.sign(claims: claims(), with: rsa).split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(try claims(["sub": "admin"]))
        #expect(refusal(parts.joined(separator: ".")) == .badSignature)
    }

    @Test("expired, issued in the future, wrong audience and wrong issuer are each refused")
    func claimsRefused() throws {
        #expect(refusal(try JSONWebToken.sign(claims: claims(["exp": now - 61]), with: rsa)) == .expired)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["iat": now + 61]), with: rsa)) == .issuedInFuture)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["aud": "someone-else"]), with: rsa)) == .wrongAudience)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["aud": ["a", "b"]]), with: rsa)) == .wrongAudience)
        // Several audiences, one of them ours: the presenter (`azp`) must be ours too.
        #expect(refusal(try JSONWebToken.sign(claims: claims(["aud": ["postern", "evil"]]), with: rsa)) == .wrongAudience)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["aud": ["postern", "evil"], "azp": "evil"]), with: rsa)) == .wrongAudience)
        // One audience: `azp` may name another client (Google's Android client for the server's id).
        #expect(throws: Never.self) { try verify(JSONWebToken.sign(claims: claims(["azp": "android-client"]), with: rsa)) }
        #expect(refusal(try JSONWebToken.sign(claims: claims(["iss": "https://evil.example"]), with: rsa)) == .wrongIssuer)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["exp": nil]), with: rsa)) == .malformed)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["exp": true]), with: rsa)) == .malformed)
        #expect(refusal(try JSONWebToken.sign(claims: claims(["sub": ""]), with: rsa)) == .malformed)
    }

    @Test("an unknown kid is refused, and so is a known kid under the other algorithm")
    func unknownKey() throws {
        #expect(refusal(try JSONWebToken.sign(claims: claims(), with: RSASigningKey(generatingWithID: "r2"))) == .unknownKey)
        // kid r1 is an RSA key: an ES256 token naming it finds no key.
        #expect(refusal(try JSONWebToken.sign(claims: claims(), with: SigningKey(generatingWithID: "r1"))) == .unknownKey)
    }

    @Test("alg none and HS256 signed with the RSA public key's bytes are refused before any key is tried")
    func algorithmConfusion() throws {
        let unsigned = assemble(header: #"{"alg":"none","kid":"r1","typ":"JWT"}"#, claims: try claims(), signature: [])
        #expect(refusal(unsigned) == .malformed)
        let publicBytes = try #require(rsa.publicJWK["n"].flatMap(Base64URL.decode))
        let jwkBytes = try JSONSerialization.data(withJSONObject: rsa.publicJWK, options: .sortedKeys)
        for secret in [publicBytes, Array(jwkBytes)] {
            let header = #"{"alg":"HS256","kid":"r1","typ":"JWT"}"#
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(try claims())
            let mac = try HMACKey(key: secret).authenticate(Array(input.utf8))
            #expect(refusal(input + "." + Base64URL.encode(mac)) == .malformed)
        }
    }

    @Test("the nonce must match; Apple's token carries the hex SHA-256 of the raw nonce the app sends")
    func nonce() throws {
        let withNonce = try JSONWebToken.sign(claims: claims(["nonce": "n-123"]), with: rsa)
        #expect(try verify(withNonce, nonce: "n-123").subject == "subject-1")
        #expect(refusal(withNonce, nonce: "n-124") == .wrongNonce)
        #expect(refusal(withNonce) == .wrongNonce)
        #expect(refusal(try JSONWebToken.sign(claims: claims(), with: rsa), nonce: "n-123") == .wrongNonce)

        // SHA-256("n-123"), computed independently (`printf n-123 | sha256sum`).
        let hashed = "c59657b376f00dd2df83c95f23185b0667a1e3c3980c735512c452f136cb383a"
        #expect(ProviderTokenVerifier.expectedNonceClaim("n-123", provider: apple) == hashed)
        let appleClaims = try claims([
            "iss": "https://appleid.apple.com", "aud": "com.example.app", "nonce": hashed, "email_verified": "true",
        ])
        let appleToken = try JSONWebToken.sign(claims: appleClaims, with: ec)
        let identity = try verify(appleToken, provider: apple, nonce: "n-123")
        #expect(identity.provider == "apple" && identity.emailVerified)
        // The hash itself is not the raw nonce: sending what the token carries is refused.
        #expect(refusal(appleToken, provider: apple, nonce: hashed) == .wrongNonce)
        let notVerified = try JSONWebToken.sign(claims: claims(["iss": "https://appleid.apple.com", "aud": "com.example.app", "email_verified": "false"]), with: ec)
        #expect(try verify(notVerified, provider: apple).emailVerified == false)
    }

    @Test("Google's tokens carry either spelling of its issuer")
    func googleIssuers() throws {
        for issuer in ["https://accounts.google.com", "accounts.google.com"] {
            let token = try JSONWebToken.sign(claims: claims(["iss": issuer, "aud": "123.apps.googleusercontent.com"]), with: rsa)
            #expect(try verify(token, provider: google).provider == "google")
        }
        let other = try JSONWebToken.sign(claims: claims(["iss": "https://accounts.google.com.evil", "aud": "123.apps.googleusercontent.com"]), with: rsa)
        #expect(refusal(other, provider: google) == .wrongIssuer)
    }
}
