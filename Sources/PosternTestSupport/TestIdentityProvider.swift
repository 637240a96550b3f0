import Foundation
import PosternCore
import PosternCrypto
import Synchronization

/// An OpenID provider as the ``ProviderRegistry`` meets it through ``ProviderHTTP``, for unit
/// tests of Core and the router: a discovery document, its keys (one RS256 key made here), and a
/// token endpoint that answers the ID token a test set for a code, only to the PKCE verifier of
/// the challenge that code was asked with and to client `web-client` / `web-secret`. It mints
/// its tokens too. The interop test (Tests/integration/providers.sh) uses a provider nobody here
/// wrote instead.
public final class TestIdentityProvider: ProviderHTTP, Sendable {
    /// Its issuer; the keys are at `/jwks`, the endpoints at `/authorize` and `/token`.
    public static let issuer = "https://idp.test"
    /// The web flow's client.
    public static let clientID = "web-client"
    public static let clientSecret = "web-secret"
    /// Its signing key.
    public let key: RSASigningKey
    private struct Counts { var get = 0, post = 0 }
    private let counts = Mutex(Counts())
    private let answers = Mutex<[String: (challenge: String, idToken: String)]>([:])

    public init() throws { key = try RSASigningKey(generatingWithID: "idp-1") }

    /// GET requests so far (discovery and keys).
    public var getRequests: Int { counts.withLock { $0.get } }
    /// Token endpoint requests so far.
    public var tokenRequests: Int { counts.withLock { $0.post } }

    /// An ID token of this provider at `now`: `sub`, for audience `aud`, with `email` (verified or
    /// not) and `nonce` when given; `exp` 10 minutes on unless given. Each token differs (`jti`).
    public func token(
        sub: String, aud: String, now: Int64, email: String? = nil, verified: Bool = true, nonce: String? = nil, exp: Int64? = nil
    ) throws -> String {
        var claims: [String: Any] = ["iss": Self.issuer, "aud": aud, "sub": sub, "iat": now, "exp": exp ?? now + 600, "jti": UUID().uuidString]
        if let email {
            claims["email"] = email
            claims["email_verified"] = verified
        }
        if let nonce { claims["nonce"] = nonce }
        return try JSONWebToken.sign(claims: JSONSerialization.data(withJSONObject: claims), with: key)
    }

    /// The token endpoint answers `idToken` for `code`, once, to the verifier of `challenge`.
    public func willAnswer(code: String, challenge: String, idToken: String) {
        answers.withLock { $0[code] = (challenge, idToken) }
    }

    public func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        counts.withLock { $0.get += 1 }
        let body: [String: Any]
        switch url {
        case Self.issuer + "/.well-known/openid-configuration":
            body = [
                "issuer": Self.issuer, "authorization_endpoint": Self.issuer + "/authorize", "token_endpoint": Self.issuer + "/token",
                "jwks_uri": Self.issuer + "/jwks",
            ]
        case Self.issuer + "/jwks": body = ["keys": [key.publicJWK]]
        default: return ProviderHTTPResponse(status: 404, body: [], cacheControl: nil)
        }
        return ProviderHTTPResponse(status: 200, body: Array((try? JSONSerialization.data(withJSONObject: body)) ?? Data()), cacheControl: "max-age=600")
    }

    public func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    {
        counts.withLock { $0.post += 1 }
        let form = Dictionary(fields, uniquingKeysWith: { first, _ in first })
        let answer = answers.withLock { answers in form["code"].flatMap { answers.removeValue(forKey: $0) } }
        guard url == Self.issuer + "/token", basic?.user == Self.clientID, basic?.password == Self.clientSecret,
            form["grant_type"] == "authorization_code", let answer, let verifier = form["code_verifier"],
            Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == answer.challenge
        else {
            return ProviderHTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8), cacheControl: nil)
        }
        let body = try? JSONSerialization.data(withJSONObject: ["id_token": answer.idToken, "access_token": "at", "token_type": "Bearer"])
        return ProviderHTTPResponse(status: 200, body: Array(body ?? Data()), cacheControl: nil)
    }
}
