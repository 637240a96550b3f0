import Foundation
import PosternCore
import Testing

/// The authorization endpoint's checks (OpenID Connect Core §3.1.2): the client and its redirect URI
/// refused on Postern's page, never redirected; everything else refused to the client with `state`;
/// PKCE S256 required (no downgrade to plain or to none) unless the client may go without, and
/// then with a nonce.
@Suite("OIDC authorization request")
struct OIDCAuthorizationRequestTests {
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let clients = [
        OIDCClient(
            clientID: "app", name: "App", authentication: .publicClient, redirectURIs: ["https://app.example.com/cb", "http://127.0.0.1/cb"],
            scopes: ["openid", "email", "profile", "offline_access"]),
        OIDCClient(
            clientID: "legacy", name: "Legacy", authentication: .secretHash(OIDCClient.secretHash(of: "s")),
            redirectURIs: ["https://legacy.example.com/cb"], allowNoPKCE: true),
        OIDCClient(clientID: "other", name: "Other", authentication: .publicClient, redirectURIs: ["https://other.example.com/cb"]),
    ]

    /// A request of `app` that passes, with `changes` applied (nil removes a parameter).
    static func request(_ changes: [String: String?] = [:], extra: [(name: String, value: String)] = []) -> [(name: String, value: String)] {
        var base: [String: String] = [
            "response_type": "code", "client_id": "app", "redirect_uri": "https://app.example.com/cb", "scope": "openid email",
            "state": "st-1", "nonce": "n-1", "code_challenge": challenge, "code_challenge_method": "S256",
        ]
        for (name, value) in changes { base[name] = value ?? nil }
        return base.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) } + extra
    }

    /// Checks `parameters` against the three clients above.
    static func validate(_ parameters: [(name: String, value: String)]) throws -> OIDCAuthorizationRequest.Outcome {
        OIDCAuthorizationRequest.validate(parameters) { id in clients.first { $0.clientID == id } }
    }

    @Test("a well-formed request is valid, with its scopes, prompt, max_age, hints and locales")
    func valid() throws {
        let outcome = try Self.validate(Self.request([
            "scope": "openid email openid offline_access", "prompt": "login consent", "max_age": "300", "login_hint": "a@example.com",
            "ui_locales": "de en", "redirect_uri": "http://127.0.0.1:49152/cb",
        ]))
        guard case .valid(let request) = outcome else {
            Issue.record("not valid: \(outcome)")
            return
        }
        #expect(request.client.clientID == "app" && request.redirectURI == "http://127.0.0.1:49152/cb")
        #expect(request.scopes == ["openid", "email", "offline_access"])
        #expect(request.state == "st-1" && request.nonce == "n-1" && request.codeChallenge == Self.challenge)
        #expect(request.prompt == [.login, .consent] && request.maxAge == 300)
        #expect(request.loginHint == "a@example.com" && request.uiLocales == ["de", "en"] && request.idTokenHint == nil)
    }

    @Test("an unknown client or an unregistered redirect URI is shown on Postern's page, never redirected", arguments: [
        ["client_id": nil], ["client_id": ""], ["client_id": "nobody"], ["client_id": "APP"],
        ["redirect_uri": nil], ["redirect_uri": "https://app.example.com/cb/"], ["redirect_uri": "https://app.example.com/cb?next=evil"],
        ["redirect_uri": "https://evil.example/cb"], ["redirect_uri": "https://app.example.com.evil.example/cb"],
        ["redirect_uri": "https://APP.example.com/cb"], ["redirect_uri": "https://app.example.com/CB"],
        ["redirect_uri": "https://app.example.com%2Fcb"], ["redirect_uri": "https://app.example.com/cb#x"],
        ["redirect_uri": "https://app.example.com:8443/cb"], ["redirect_uri": "https://evil@app.example.com/cb"],
        // Another client's redirect URI.
        ["redirect_uri": "https://other.example.com/cb"],
        // A bad client or redirect with every other parameter broken too: still the page.
        ["redirect_uri": "https://evil.example/cb", "response_type": "token", "code_challenge": nil],
    ] as [[String: String?]])
    func refusedOnPage(changes: [String: String?]) throws {
        guard case .refusedOnPage = try Self.validate(Self.request(changes)) else {
            Issue.record("redirected or taken: \(try Self.validate(Self.request(changes)))")
            return
        }
    }

    @Test("client_id or redirect_uri given twice is shown on the page")
    func repeatedClientOrRedirect() throws {
        for name in ["client_id", "redirect_uri"] {
            let parameters = Self.request(extra: [(name: name, value: name == "client_id" ? "other" : "https://other.example.com/cb")])
            guard case .refusedOnPage = try Self.validate(parameters) else {
                Issue.record("\(name) twice was not refused on the page")
                continue
            }
        }
    }

    @Test("every other fault is sent back to the client with its error and the state", arguments: [
        (["response_type": nil], "invalid_request"),
        (["response_type": "token"], "unsupported_response_type"),
        (["response_type": "code id_token"], "unsupported_response_type"),
        (["response_mode": "fragment"], "invalid_request"),
        (["scope": nil], "invalid_scope"),
        (["scope": "email profile"], "invalid_scope"),
        (["scope": "openid admin"], "invalid_scope"),
        // PKCE: missing, plain, a method without S256, a challenge without a method (plain), a malformed one.
        (["code_challenge": nil, "code_challenge_method": nil], "invalid_request"),
        (["code_challenge": nil], "invalid_request"),
        (["code_challenge_method": "plain"], "invalid_request"),
        (["code_challenge_method": "s256"], "invalid_request"),
        (["code_challenge_method": nil], "invalid_request"),
        (["code_challenge": "short"], "invalid_request"),
        (["code_challenge": String(repeating: "a", count: 43) + "="], "invalid_request"),
        (["prompt": "none login"], "invalid_request"),
        (["prompt": "select_account"], "invalid_request"),
        (["max_age": "-1"], "invalid_request"),
        (["max_age": "1e3"], "invalid_request"),
        (["max_age": ""], "invalid_request"),
        (["request": "eyJ..."], "request_not_supported"),
        (["request_uri": "https://evil.example/r"], "request_uri_not_supported"),
        (["nonce": String(repeating: "n", count: 2_049)], "invalid_request"),
    ] as [([String: String?], String)])
    func refusedToClient(changes: [String: String?], expected: String) throws {
        let outcome = try Self.validate(Self.request(changes))
        guard case .refusedToClient(let redirect, let error, let description, let state) = outcome else {
            Issue.record("not sent back: \(outcome)")
            return
        }
        #expect(redirect == "https://app.example.com/cb" && error == expected && state == "st-1" && !description.isEmpty)
    }

    @Test("a repeated parameter is invalid_request; the state of a request that repeats it is not echoed")
    func repeatedParameters() throws {
        guard case .refusedToClient(_, "invalid_request", _, "st-1") = try Self.validate(Self.request(extra: [(name: "scope", value: "openid")])) else {
            Issue.record("a repeated scope was taken")
            return
        }
        guard case .refusedToClient(_, "invalid_request", _, nil) = try Self.validate(Self.request(extra: [(name: "state", value: "other")])) else {
            Issue.record("a repeated state was taken or echoed")
            return
        }
    }

    @Test("a client registered with allowNoPkce may leave PKCE out, only with a nonce; plain stays refused")
    func allowNoPKCE() throws {
        let legacy: [String: String?] = ["client_id": "legacy", "redirect_uri": "https://legacy.example.com/cb", "code_challenge": nil, "code_challenge_method": nil]
        guard case .valid(let request) = try Self.validate(Self.request(legacy)) else {
            Issue.record("legacy without PKCE but with a nonce was refused")
            return
        }
        #expect(request.codeChallenge == nil && request.nonce == "n-1")
        var withoutNonce = legacy
        withoutNonce["nonce"] = .some(nil)
        guard case .refusedToClient(_, "invalid_request", let description, _) = try Self.validate(Self.request(withoutNonce)) else {
            Issue.record("legacy without PKCE and without a nonce was taken")
            return
        }
        #expect(description.contains("nonce"))
        var plain = legacy
        plain["code_challenge"] = .some("a-plain-verifier-sent-as-its-own-challenge-xxxx")
        plain["code_challenge_method"] = .some("plain")
        guard case .refusedToClient(_, "invalid_request", _, _) = try Self.validate(Self.request(plain)) else {
            Issue.record("plain was taken from legacy")
            return
        }
    }
}
