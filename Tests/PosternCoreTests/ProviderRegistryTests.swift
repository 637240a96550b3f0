import Dispatch
import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing

/// A provider's server as a table: what each URL answers, and every request made, in order.
final class ProviderServerTable: ProviderHTTP {
    struct Request: Sendable, Equatable {
        let method: String
        let url: String
        let fields: [String]
        let basic: String?
    }

    private let answers = Mutex<[String: Result<ProviderHTTPResponse, ProviderHTTPError>]>([:])
    private let log = Mutex<[Request]>([])
    /// Runs before a GET of the URL is answered (a test holds a fetch there).
    private let holds = Mutex<[String: @Sendable () -> Void]>([:])

    func serve(_ url: String, json: Any, cacheControl: String? = nil, status: Int = 200) throws {
        let body = try JSONSerialization.data(withJSONObject: json)
        answers.withLock { $0[url] = .success(ProviderHTTPResponse(status: status, body: Array(body), cacheControl: cacheControl)) }
    }

    func serve(_ url: String, bytes: [UInt8], status: Int = 200) {
        answers.withLock { $0[url] = .success(ProviderHTTPResponse(status: status, body: bytes, cacheControl: nil)) }
    }

    func fail(_ url: String) { answers.withLock { $0[url] = .failure(ProviderHTTPError("connection refused")) } }

    func hold(_ url: String, _ body: @escaping @Sendable () -> Void) { holds.withLock { $0[url] = body } }

    var requests: [Request] { log.withLock { $0 } }
    func count(_ url: String) -> Int { requests.filter { $0.url == url }.count }

    func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        log.withLock { $0.append(Request(method: "GET", url: url, fields: [], basic: nil)) }
        holds.withLock { $0[url] }?()
        return try answer(url)
    }

    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    {
        let request = Request(method: "POST", url: url, fields: fields.map { "\($0)=\($1)" }, basic: basic.map { "\($0.user):\($0.password)" })
        log.withLock { $0.append(request) }
        return try answer(url)
    }

    private func answer(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        guard let answer = answers.withLock({ $0[url] }) else { return ProviderHTTPResponse(status: 404, body: [], cacheControl: nil) }
        return try answer.get()
    }
}

/// The registry's keys, discovery and web flow requests over a table of answers: every test
/// counts the requests the registry made.
@Suite("ProviderRegistry: keys cached and refetched by the rules, discovery, the web flow's requests")
struct ProviderRegistryTests {
    let now: Int64 = 1_800_000_000
    let key: SigningKey
    let jwks = "https://keys.example/jwks"
    let corp: IdentityProvider
    let found: IdentityProvider
    let apple: IdentityProvider
    let google: IdentityProvider
    let server = ProviderServerTable()
    let registry: ProviderRegistry

    init() throws {
        key = try SigningKey(generatingWithID: "k1")
        let providers = try IdentityProvider.parseList(
            Data(
                """
                [{"id": "corp", "issuer": "https://idp.example", "jwksUri": "https://keys.example/jwks", "audiences": ["postern"]},
                 {"id": "found", "issuer": "https://found.example/tenant", "audiences": ["web"], "clientId": "web", "clientSecretFile": "/x"},
                 {"id": "apple", "audiences": ["com.example.app", "com.example.web"], "clientId": "com.example.web", "clientSecretFile": "/y"},
                 {"id": "google", "audiences": ["123.apps.googleusercontent.com"], "clientId": "123.apps.googleusercontent.com"}]
                """.utf8))
        (corp, found, apple, google) = (providers[0], providers[1], providers[2], providers[3])
        registry = ProviderRegistry(
            providers: providers, clientSecrets: ["found": "s3cret:+", "apple": "apple.client.jwt"], http: server, clock: ManualClock(Date(timeIntervalSince1970: 1_800_000_000)))
        try server.serve(jwks, json: ["keys": [key.publicJWK]], cacheControl: "public, max-age=600")
    }

    func token(_ changes: [String: Any] = [:], with signer: SigningKey? = nil, issuer: String = "https://idp.example", audience: String = "postern")
        throws -> String
    {
        var claims: [String: Any] = ["iss": issuer, "aud": audience, "sub": "s-1", "iat": now - 10, "exp": now + 3600, "email": "ada@example.com"]
        for (name, value) in changes { claims[name] = value }
        return try JSONWebToken.sign(claims: JSONSerialization.data(withJSONObject: claims), with: signer ?? key)
    }

    func refusal(_ token: String, provider: IdentityProvider? = nil, at time: Int64) -> ProviderCheckError? {
        #expect(throws: ProviderCheckError.self) { try registry.verify(token, provider: provider ?? corp, nonce: nil, now: time) }
    }

    @Test("keys fetched once are used while fresh: three tokens, one request")
    func cachedKeysAreNotRefetched() throws {
        for offset in [0, 30, 599] as [Int64] {
            let identity = try registry.verify(token(), provider: corp, nonce: nil, now: now + offset)
            #expect(identity.subject == "s-1" && identity.provider == "corp")
        }
        #expect(server.requests == [.init(method: "GET", url: jwks, fields: [], basic: nil)])
    }

    @Test("an unknown kid refetches once (finding a new key); a second unknown kid within the minute does not")
    func unknownKeyRefetchesOncePerMinute() throws {
        _ = try registry.verify(token(), provider: corp, nonce: nil, now: now)
        #expect(server.count(jwks) == 1)
        // The provider rotates in k2: a token under it refetches and is accepted.
        let rotated = try SigningKey(generatingWithID: "k2")
        try server.serve(jwks, json: ["keys": [key.publicJWK, rotated.publicJWK]], cacheControl: "max-age=600")
        #expect(try registry.verify(token(with: rotated), provider: corp, nonce: nil, now: now + 61).subject == "s-1")
        #expect(server.count(jwks) == 2)
        // A made-up kid right after: no fetch, refused.
        let madeUp = try SigningKey(generatingWithID: "k9")
        #expect(refusal(try token(with: madeUp), at: now + 62) == .refused(.unknownKey))
        #expect(refusal(try token(with: madeUp), at: now + 120) == .refused(.unknownKey))
        #expect(server.count(jwks) == 2)
        // A minute after the last fetch, one more fetch, still refused: and only one.
        #expect(refusal(try token(with: madeUp), at: now + 121) == .refused(.unknownKey))
        #expect(server.count(jwks) == 3)
        // The known keys still verify without a fetch.
        #expect(try registry.verify(token(), provider: corp, nonce: nil, now: now + 122).subject == "s-1")
        #expect(server.count(jwks) == 3)
    }

    @Test("keys past their max-age are fetched again")
    func staleKeysAreRefetched() throws {
        _ = try registry.verify(token(), provider: corp, nonce: nil, now: now)
        _ = try registry.verify(token(), provider: corp, nonce: nil, now: now + 599)
        #expect(server.count(jwks) == 1)
        _ = try registry.verify(token(["iat": now + 590]), provider: corp, nonce: nil, now: now + 600)
        #expect(server.count(jwks) == 2)
    }

    @Test("a failed refetch keeps the stale keys, and is not tried again within the minute")
    func failedFetchKeepsStaleKeys() throws {
        _ = try registry.verify(token(), provider: corp, nonce: nil, now: now)
        server.fail(jwks)
        #expect(try registry.verify(token(), provider: corp, nonce: nil, now: now + 700).subject == "s-1")
        #expect(server.count(jwks) == 2)
        #expect(try registry.verify(token(), provider: corp, nonce: nil, now: now + 759).subject == "s-1")
        #expect(server.count(jwks) == 2)
        // A server error is a failure too.
        try server.serve(jwks, json: ["error": "down"], status: 503)
        #expect(try registry.verify(token(), provider: corp, nonce: nil, now: now + 760).subject == "s-1")
        #expect(server.count(jwks) == 3)
    }

    @Test("no keys and a failed fetch: unavailable, and no new request within the minute")
    func noKeysIsUnavailable() throws {
        server.fail(jwks)
        guard case .unavailable(let message) = refusal(try token(), at: now) else {
            Issue.record("not unavailable")
            return
        }
        #expect(message.contains("corp") && message.contains("keys.example") && !message.contains("/jwks"))
        guard case .unavailable = refusal(try token(), at: now + 59) else { Issue.record("not unavailable"); return }
        #expect(server.count(jwks) == 1)
    }

    @Test("a JWKS over 256 KiB is refused, not read")
    func oversizedBodyRefused() throws {
        server.serve(jwks, bytes: Array(repeating: UInt8(ascii: " "), count: ProviderHTTPResponse.bodyLimit + 1))
        guard case .unavailable(let message) = refusal(try token(), at: now) else { Issue.record("not unavailable"); return }
        #expect(message.contains("256 KiB"))
        #expect(server.count(jwks) == 1)
    }

    @Test("a token that is not a JWS is refused before any request")
    func malformedMakesNoRequest() {
        #expect(refusal("not.a.token", at: now) == .refused(.malformed))
        #expect(server.requests.isEmpty)
    }

    /// The discovery document of `found`, naming `issuer`.
    func serveDiscovery(issuer: String = "https://found.example/tenant") throws {
        try server.serve(
            "https://found.example/tenant/.well-known/openid-configuration",
            json: [
                "issuer": issuer, "jwks_uri": "https://found.example/keys", "authorization_endpoint": "https://found.example/authorize",
                "token_endpoint": "https://found.example/token",
            ])
        try server.serve("https://found.example/keys", json: ["keys": [key.publicJWK]], cacheControl: "max-age=3600")
    }

    @Test("a provider without jwksUri is found by its discovery document, fetched once for keys and the web flow")
    func discoveryFindsKeysAndEndpoints() throws {
        try serveDiscovery()
        let token = try token(issuer: "https://found.example/tenant", audience: "web")
        #expect(try registry.verify(token, provider: found, nonce: nil, now: now).provider == "found")
        #expect(server.requests.map(\.url) == ["https://found.example/tenant/.well-known/openid-configuration", "https://found.example/keys"])
        let url = try registry.authorizationURL(provider: found, redirectURI: "https://postern.example/cb", state: "st", nonce: "n 1", codeChallenge: "cc")
        #expect(
            url == "https://found.example/authorize?response_type=code&client_id=web&redirect_uri=https%3A%2F%2Fpostern.example%2Fcb"
                + "&scope=openid%20email&state=st&nonce=n%201&code_challenge=cc&code_challenge_method=S256")
        #expect(try registry.verify(token, provider: found, nonce: nil, now: now + 10).subject == "s-1")
        #expect(server.requests.count == 2)
    }

    @Test("a discovery document naming another issuer is refused: no keys are fetched from it")
    func discoveryIssuerMismatchRefused() throws {
        try serveDiscovery(issuer: "https://found.example/tenant/")
        let token = try token(issuer: "https://found.example/tenant", audience: "web")
        guard case .unavailable(let message) = refusal(token, provider: found, at: now) else { Issue.record("not unavailable"); return }
        #expect(message.contains("another issuer"))
        #expect(server.requests.map(\.url) == ["https://found.example/tenant/.well-known/openid-configuration"])
        #expect(throws: ProviderCheckError.self) {
            try registry.authorizationURL(provider: found, redirectURI: "https://p/cb", state: "s", nonce: "n", codeChallenge: "c")
        }
        // Within the minute the failed discovery is not tried again.
        #expect(server.requests.count == 1)
    }

    @Test("a discovery document's jwks_uri must be https")
    func discoveryPlainHTTPRefused() throws {
        try server.serve(
            "https://found.example/tenant/.well-known/openid-configuration",
            json: ["issuer": "https://found.example/tenant", "jwks_uri": "http://found.example/keys"])
        let token = try token(issuer: "https://found.example/tenant", audience: "web")
        guard case .unavailable(let message) = refusal(token, provider: found, at: now) else { Issue.record("not unavailable"); return }
        #expect(message.contains("jwks_uri is not an https URL"))
        #expect(server.requests.count == 1)
    }

    @Test("Apple's and Google's web flow use their own endpoints, with no request; Apple's nonce is hashed and answered by form_post")
    func knownEndpoints() throws {
        let appleURL = try registry.authorizationURL(provider: apple, redirectURI: "https://p/cb", state: "s", nonce: "n-123", codeChallenge: "c")
        let hashed = ProviderTokenVerifier.expectedNonceClaim("n-123", provider: apple)
        #expect(
            appleURL == "https://appleid.apple.com/auth/authorize?response_type=code&client_id=com.example.web&redirect_uri=https%3A%2F%2Fp%2Fcb"
                + "&scope=openid%20email&state=s&nonce=\(hashed)&code_challenge=c&code_challenge_method=S256&response_mode=form_post")
        let googleURL = try registry.authorizationURL(provider: google, redirectURI: "https://p/cb", state: "s", nonce: "n", codeChallenge: "c")
        #expect(googleURL.hasPrefix("https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=123.apps.googleusercontent.com&"))
        #expect(!googleURL.contains("response_mode"))
        #expect(throws: ProviderCheckError.self) {
            try registry.authorizationURL(provider: corp, redirectURI: "https://p/cb", state: "s", nonce: "n", codeChallenge: "c")
        }
        #expect(server.requests.isEmpty)
    }

    @Test("redeem: HTTP Basic with the secret, Apple's secret as form fields, a public client's id in the form; a refused code is malformed")
    func redeem() throws {
        try serveDiscovery()
        try server.serve("https://found.example/token", json: ["id_token": "the.id.token", "token_type": "Bearer"])
        #expect(try registry.redeem(code: "c1", codeVerifier: "v1", redirectURI: "https://p/cb", provider: found) == "the.id.token")
        let post = try #require(server.requests.last)
        #expect(post.method == "POST" && post.url == "https://found.example/token")
        #expect(post.fields == ["grant_type=authorization_code", "code=c1", "redirect_uri=https://p/cb", "code_verifier=v1"])
        // RFC 6749 §2.3.1: form-encoded before Basic.
        #expect(post.basic == "web:s3cret%3A%2B")

        try server.serve("https://appleid.apple.com/auth/token", json: ["id_token": "apple.id.token"])
        #expect(try registry.redeem(code: "c2", codeVerifier: "v2", redirectURI: "https://p/cb", provider: apple) == "apple.id.token")
        let applePost = try #require(server.requests.last)
        #expect(applePost.basic == nil && applePost.fields.suffix(2) == ["client_id=com.example.web", "client_secret=apple.client.jwt"])

        try server.serve("https://oauth2.googleapis.com/token", json: ["error": "invalid_grant"], status: 400)
        #expect(throws: ProviderCheckError.refused(.malformed)) {
            try registry.redeem(code: "c3", codeVerifier: "v3", redirectURI: "https://p/cb", provider: google)
        }
        let googlePost = try #require(server.requests.last)
        #expect(googlePost.basic == nil && googlePost.fields.last == "client_id=123.apps.googleusercontent.com")
        try server.serve("https://oauth2.googleapis.com/token", json: ["access_token": "no id token"])
        #expect(throws: ProviderCheckError.refused(.malformed)) {
            try registry.redeem(code: "c4", codeVerifier: "v4", redirectURI: "https://p/cb", provider: google)
        }
        server.fail("https://oauth2.googleapis.com/token")
        guard case .unavailable(let message) = (#expect(throws: ProviderCheckError.self) {
            try registry.redeem(code: "c5", codeVerifier: "v5", redirectURI: "https://p/cb", provider: google)
        }) else { Issue.record("not unavailable"); return }
        #expect(!message.contains("c5"))
        // Discovery once, then one POST per redemption.
        #expect(server.requests.count == 6)
    }

    @Test("a slow key fetch of one provider does not hold up another's")
    func slowProviderDoesNotBlockAnother() throws {
        try serveDiscovery()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let timedOut = Mutex(false)
        server.hold(jwks) {
            entered.signal()
            if release.wait(timeout: .now() + 10) == .timedOut { timedOut.withLock { $0 = true } }
        }
        let slow = try token()
        let registry = self.registry
        let (corp, now) = (self.corp, self.now)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? registry.verify(slow, provider: corp, nonce: nil, now: now)
            finished.signal()
        }
        entered.wait()
        // corp's fetch is under way and held: found's keys are fetched and used meanwhile.
        let other = try token(issuer: "https://found.example/tenant", audience: "web")
        #expect(try registry.verify(other, provider: found, nonce: nil, now: now).provider == "found")
        release.signal()
        finished.wait()
        #expect(!timedOut.withLock { $0 })
        #expect(server.count(jwks) == 1)
    }
}

/// Apple's server-to-server notifications: signed with Apple's ID-token keys, through the same cache.
@Suite("Apple's server-to-server notifications: verified by signature, audience and age")
struct AppleNotificationTests {
    let now: Int64 = 1_800_000_000
    let key: RSASigningKey
    let server = ProviderServerTable()
    let registry: ProviderRegistry

    init() throws {
        key = try RSASigningKey(generatingWithID: "apple-1")
        let providers = try IdentityProvider.parseList(Data(#"[{"id": "apple", "audiences": ["com.example.app"]}]"#.utf8))
        registry = ProviderRegistry(providers: providers, clientSecrets: [:], http: server)
        try server.serve("https://appleid.apple.com/auth/keys", json: ["keys": [key.publicJWK]], cacheControl: "max-age=86400")
    }

    func payload(_ changes: [String: Any] = [:], event: [String: Any]? = nil, with signer: RSASigningKey? = nil) throws -> String {
        let events = event ?? ["type": "consent-revoked", "sub": "001234.abc", "event_time": (now - 5) * 1000]
        var claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": "com.example.app", "iat": now - 5, "jti": "j-1",
            "events": String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self),
        ]
        for (name, value) in changes { claims[name] = value }
        return try JSONWebToken.sign(claims: JSONSerialization.data(withJSONObject: claims), with: signer ?? key)
    }

    func refusal(_ payload: String) -> ProviderCheckError? {
        #expect(throws: ProviderCheckError.self) { try registry.verifyAppleNotification(payload, now: now) }
    }

    @Test("a good notification is read, as the JWS or as Apple's whole body; the keys are fetched once")
    func good() throws {
        let notification = try registry.verifyAppleNotification(payload(), now: now)
        #expect(notification == AppleNotification(kind: .consentRevoked, subject: "001234.abc", eventTime: (now - 5) * 1000))
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["payload": try payload(event: ["type": "account-delete", "sub": "s", "event_time": 1_799_999_001_000])]), as: UTF8.self)
        #expect(try registry.verifyAppleNotification(body, now: now).kind == .accountDelete)
        let other = try payload(event: ["type": "email-disabled", "sub": "s", "email": "x@privaterelay.appleid.com", "is_private_email": "true", "event_time": 1_799_999_002_000])
        #expect(try registry.verifyAppleNotification(other, now: now).kind == .emailDisabled)
        let later = try payload(event: ["type": "something-new", "sub": "s", "event_time": 1_799_999_003_000])
        #expect(try registry.verifyAppleNotification(later, now: now).kind == .unknown("something-new"))
        #expect(server.requests.count == 1)
    }

    @Test("a forged notification (another key under Apple's kid), a wrong audience and a stale iat are refused")
    func refused() throws {
        let impostor = try RSASigningKey(generatingWithID: "apple-1")
        #expect(refusal(try payload(with: impostor)) == .refused(.badSignature))
        #expect(refusal(try payload(["aud": "com.attacker.app"])) == .refused(.wrongAudience))
        #expect(refusal(try payload(["iss": "https://appleid.apple.com.evil"])) == .refused(.wrongIssuer))
        #expect(refusal(try payload(["iat": now - 3601])) == .refused(.expired))
        #expect(throws: Never.self) { try registry.verifyAppleNotification(try payload(["iat": now - 3600]), now: now) }
        #expect(refusal(try payload(["iat": now + 61])) == .refused(.issuedInFuture))
        #expect(refusal(try payload(["jti": ""])) == .refused(.malformed))
        #expect(refusal(try payload(["events": "not json"])) == .refused(.malformed))
        #expect(refusal(try payload(event: ["type": "consent-revoked", "event_time": 1_799_999_001_000])) == .refused(.malformed))
        #expect(refusal("{\"payload\": 1}") == .refused(.malformed))
        #expect(server.requests.count == 1)
    }

    @Test("no apple provider: unavailable, no request")
    func notConfigured() {
        let none = ProviderRegistry(providers: [], clientSecrets: [:], http: server)
        #expect(throws: ProviderCheckError.unavailable("apple is not configured")) { try none.verifyAppleNotification("x.y.z", now: now) }
        #expect(server.requests.isEmpty)
    }
}
