import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// A client registered for RS256 (`idTokenSignedResponseAlg`, OpenID Connect Core §15.1) gets its
/// ID tokens and access tokens signed with the ring's RSA key, published in the JWKS; everything
/// that verifies the provider's tokens takes them. The API's own sessions stay ES256.
@Suite("OIDC flow: ES256 and RS256 clients")
struct OIDCSigningAlgorithmTests {
    static let redirect = "https://rsa.example.com/cb"

    /// The harness with a confidential, first-party client `rsa` registered for RS256.
    func harness() throws -> OIDCHarness {
        let o = try OIDCHarness()
        let rsa = OIDCClient(
            clientID: "rsa", name: "RSA only", authentication: .secretHash(SHA256.hash(Array(o.confidentialSecret.utf8))),
            redirectURIs: [Self.redirect], postLogoutRedirectURIs: ["https://rsa.example.com/bye"], scopes: OIDCClient.knownScopes,
            firstParty: true, idTokenSignedResponseAlg: .rs256)
        try o.h.store.write { try $0.insertOIDCClient(rsa) }
        return o
    }

    /// The RS256 client's token answer, after a sign-in by link; and the browser session.
    func tokens(_ o: OIDCHarness) throws -> (body: [String: JSONValue], session: String) {
        let (redirect, session) = try o.signInByLink(
            "ada@example.com", parameters: o.parameters(client: "rsa", redirect: Self.redirect))
        let code = try #require(OIDCHarness.query(redirect, "code"))
        return (try o.exchange(code, client: "rsa", redirect: Self.redirect), session)
    }

    static func text(_ value: JSONValue?) throws -> String {
        guard case .string(let text)? = value else { throw FlowHarness.HarnessError.noMail }
        return text
    }

    @Test("an RS256 client's ID token and access token are RS256 under the JWKS's active RSA key; its access token works at userinfo")
    func rs256Tokens() throws {
        let o = try harness()
        let ring = o.h.keys.current
        let (body, _) = try tokens(o)
        let idToken = try JSONWebToken.parse(try Self.text(body["id_token"]))
        #expect(idToken.algorithm == .rs256 && idToken.type == "JWT" && idToken.keyID == ring.idTokenRSASigner.keyID)
        #expect(idToken.isSigned(by: ring.idTokenRSASigner) && !idToken.isSigned(by: ring.idTokenSigner))
        // The key the JWKS publishes under the token's kid: RSA, the signer's modulus and exponent.
        let published = try #require(ring.jwks["keys"]?.first { $0["kid"] == idToken.keyID })
        #expect(published["kty"] == "RSA" && published["alg"] == "RS256")
        #expect(published["n"] == ring.idTokenRSASigner.publicJWK["n"] && published["e"] == "AQAB")
        let claims = try #require(try JSONSerialization.jsonObject(with: idToken.claims) as? [String: Any])
        #expect(claims["aud"] as? String == "rsa" && claims["nonce"] as? String == "n-1" && claims["iss"] as? String == "https://auth.example.com")

        let accessText = try Self.text(body["access_token"])
        let access = try JSONWebToken.parse(accessText)
        #expect(access.algorithm == .rs256 && access.type == "at+jwt" && access.isSigned(by: ring.idTokenRSASigner))
        guard case .object(let info) = try o.flow.userinfo(authorization: "Bearer " + accessText) else {
            throw FlowHarness.HarnessError.noMail
        }
        #expect(info["sub"] == .string(claims["sub"] as? String ?? "") && info["email"] == .string("ada@example.com"))

        // A refresh signs with the client's algorithm again.
        let refreshed = try o.flow.token(
            [("grant_type", "refresh_token"), ("refresh_token", try Self.text(body["refresh_token"])), ("client_id", "rsa"),
             ("client_secret", o.confidentialSecret)], authorization: nil)
        guard case .object(let again) = refreshed else { throw FlowHarness.HarnessError.noMail }
        #expect(try JSONWebToken.parse(try Self.text(again["id_token"])).algorithm == .rs256)
        #expect(try JSONWebToken.parse(try Self.text(again["access_token"])).algorithm == .rs256)
    }

    @Test("the ES256 client beside it still gets ES256 tokens under the ES256 key")
    func es256Beside() throws {
        let o = try harness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let body = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        for name in ["id_token", "access_token"] {
            let token = try JSONWebToken.parse(try Self.text(body[name]))
            #expect(token.algorithm == .es256 && token.keyID == o.h.keys.current.idTokenSigner.keyID, "\(name)")
        }
    }

    @Test("an RS256 ID token is a valid id_token_hint at logout; its access token is revoked by the client, ending it at userinfo")
    func hintAndRevocation() throws {
        let o = try harness()
        let (body, session) = try tokens(o)
        let idToken = try Self.text(body["id_token"])
        let back = try o.flow.logout(
            ["id_token_hint": idToken, "post_logout_redirect_uri": "https://rsa.example.com/bye", "state": "s"], session: session,
            confirmed: false)
        #expect(back == .redirect("https://rsa.example.com/bye?state=s"), "the hint proves the client asked: no confirmation")

        let access = try Self.text(body["access_token"])
        _ = try o.flow.userinfo(authorization: "Bearer " + access)
        try o.flow.revoke([("token", access), ("client_id", "rsa"), ("client_secret", o.confidentialSecret)], authorization: nil)
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + access) } == "invalid_token")
    }

    @Test("an RS256 access token relabelled ES256, or with its signature altered, is refused at userinfo")
    func retiredAndRelabelled() throws {
        let o = try harness()
        let (body, _) = try tokens(o)
        let access = try Self.text(body["access_token"])
        // The header says ES256 over the RSA signature: no key verifies it.
        var parts = access.split(separator: ".").map(String.init)
        let header = try #require(Base64URL.decode(parts[0]))
        parts[0] = Base64URL.encode(Array(String(decoding: header, as: UTF8.self).replacingOccurrences(of: "RS256", with: "ES256").utf8))
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + parts.joined(separator: ".")) } == "invalid_token")
        // Same-length tampering of the signature is refused too.
        let signaturePart = try #require(access.split(separator: ".").last)
        var signature = try #require(Base64URL.decode(signaturePart))
        signature[0] ^= 1
        let tampered = access.split(separator: ".").dropLast().joined(separator: ".") + "." + Base64URL.encode(signature)
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + tampered) } == "invalid_token")
    }

    @Test("the API's sessions take ES256 only: its own claims signed with the RSA key are no session")
    func apiSessionsStayES256() throws {
        let o = try harness()
        let h = o.h
        let session = try h.service.sessions.signInAnonymously()
        let parsed = try JSONWebToken.parse(session.idToken)
        #expect(parsed.algorithm == .es256)
        let ring = h.keys.current
        // The control: the same claims signed again with the ES256 key are a session.
        let es = try JSONWebToken.sign(claims: parsed.claims, with: ring.idTokenSigner)
        #expect(try h.service.profiles.me(idToken: es).uid == session.uid)
        let rsa = try JSONWebToken.sign(claims: parsed.claims, with: ring.idTokenRSASigner)
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: rsa) }
    }
}
