import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The OpenID Connect provider's flow over the in-memory store: the straight path, then each
/// attacker's sequence of issue 45 that Core decides.
struct OIDCHarness {
    let h: FlowHarness
    let confidentialSecret = "grafana-secret-of-thirty-two-random-bytes-xx"
    var flow: OIDCFlow { h.service.oidc }
    static let browser = "browser-cookie-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    static let otherBrowser = "browser-cookie-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA"
    static let verifier = "a-pkce-verifier-of-at-least-forty-three-characters-0123456789"
    static var challenge: String { Base64URL.encode(SHA256.hash(Array(verifier.utf8))) }

    init(
        identityProviders: ProviderRegistry = .none, hookHTTP: (any HookHTTP)? = nil, configure: (inout AuthConfiguration) -> Void = { _ in }
    ) throws {
        h = try FlowHarness(identityProviders: identityProviders, hookHTTP: hookHTTP, configure: configure)
        let grafana = OIDCClient(
            clientID: "grafana", name: "Grafana", authentication: .secretHash(SHA256.hash(Array(confidentialSecret.utf8))),
            redirectURIs: ["https://grafana.example.com/login/generic_oauth"],
            postLogoutRedirectURIs: ["https://grafana.example.com/login"], scopes: OIDCClient.knownScopes, firstParty: true)
        let notes = OIDCClient(
            clientID: "notes", name: "Notes", authentication: .publicClient, redirectURIs: ["http://127.0.0.1/callback"],
            scopes: OIDCClient.knownScopes)
        let legacy = OIDCClient(
            clientID: "legacy", name: "Legacy", authentication: .secretHash(SHA256.hash(Array(confidentialSecret.utf8))),
            redirectURIs: ["https://legacy.example.com/cb"], firstParty: true, allowNoPKCE: true)
        try h.store.write { tx in
            for client in [grafana, notes, legacy] { try tx.insertOIDCClient(client) }
        }
    }

    func parameters(client: String = "grafana", redirect: String = "https://grafana.example.com/login/generic_oauth",
                    scope: String = "openid email profile offline_access", extra: [(String, String)] = [],
                    pkce: Bool = true) -> [(name: String, value: String)] {
        var list: [(name: String, value: String)] = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope), ("state", "st-1"),
            ("nonce", "n-1"),
        ]
        if pkce { list += [("code_challenge", Self.challenge), ("code_challenge_method", "S256")] }
        return list + extra.map { (name: $0.0, value: $0.1) }
    }

    /// The oobCode of the newest link.
    func lastOOBCode() throws -> String {
        let link = try h.lastLink()
        return try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
    }

    /// A query parameter of a redirect.
    static func query(_ url: String, _ name: String) -> String? {
        URLComponents(string: url)?.queryItems?.first { $0.name == name }?.value
    }

    /// Signs `email` in on the hosted page by the mail's link in `browser`: the redirect and the session cookie.
    func signInByLink(_ email: String, parameters: [(name: String, value: String)]? = nil, browser: String = browser) throws -> (String, String) {
        guard case .signIn(let pending, _) = try flow.authorize(parameters ?? self.parameters(), browser: browser, session: nil) else {
            throw FlowHarness.HarnessError.noLink
        }
        guard case .checkMail = try flow.sendLink(request: pending.id, browser: browser, email: email) else { throw FlowHarness.HarnessError.noMail }
        let answer = try flow.completeWithLink(request: pending.id, browser: browser, oobCode: try lastOOBCode(), session: nil)
        guard case .redirect(let url) = answer.outcome, let session = answer.newSession else {
            Issue.record("not redirected: \(answer)")
            throw FlowHarness.HarnessError.noLink
        }
        return (url, session)
    }

    /// The token endpoint's answer for `code`.
    func exchange(_ code: String, client: String = "grafana", secret: String? = nil, verifier: String? = verifier,
                  redirect: String = "https://grafana.example.com/login/generic_oauth") throws -> [String: JSONValue] {
        var form: [(name: String, value: String)] = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("client_id", client)]
        if let verifier { form.append(("code_verifier", verifier)) }
        if client != "notes" { form.append(("client_secret", secret ?? confidentialSecret)) }
        guard case .object(let body) = try flow.token(form, authorization: nil) else { throw FlowHarness.HarnessError.noMail }
        return body
    }

    /// The claims of a JWT, unverified.
    static func claims(_ token: JSONValue?) throws -> [String: Any] {
        guard case .string(let text)? = token else { throw FlowHarness.HarnessError.noMail }
        return try #require(try JSONSerialization.jsonObject(with: JSONWebToken.parse(text).claims) as? [String: Any])
    }
}

/// What a call threw, as an OAuth error code.
func oauthError(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as OIDCProtocolError {
        return error.error
    } catch {
        return "unexpected \(error)"
    }
}

@Suite("OIDC flow: the straight path")
struct OIDCFlowTests {
    @Test("authorize → link in the same browser → code with state and iss → tokens with nonce, amr, aud → userinfo")
    func straightPath() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        #expect(redirect.hasPrefix("https://grafana.example.com/login/generic_oauth?code="))
        #expect(OIDCHarness.query(redirect, "state") == "st-1")
        #expect(OIDCHarness.query(redirect, "iss") == "https://auth.example.com")
        let code = try #require(OIDCHarness.query(redirect, "code"))
        let body = try o.exchange(code)
        #expect(body["token_type"] == .string("Bearer"))
        let id = try OIDCHarness.claims(body["id_token"])
        #expect(id["aud"] as? String == "grafana")
        #expect(id["iss"] as? String == "https://auth.example.com")
        #expect(id["nonce"] as? String == "n-1")
        #expect(id["amr"] as? [String] == ["link"])
        #expect(id["email"] as? String == "ada@example.com")
        #expect(id["email_verified"] as? Bool == true)
        guard case .string(let access)? = body["access_token"] else { throw FlowHarness.HarnessError.noMail }
        #expect(try JSONWebToken.parse(access).type == "at+jwt")
        let info = try o.flow.userinfo(authorization: "Bearer " + access)
        guard case .object(let claims) = info else { throw FlowHarness.HarnessError.noMail }
        #expect(claims["sub"] == .string(id["sub"] as? String ?? ""))
        #expect(claims["email"] == .string("ada@example.com"))
        #expect(body["refresh_token"] != nil)
        // The OIDC ID token is not an API session.
        guard case .string(let idToken)? = body["id_token"] else { throw FlowHarness.HarnessError.noMail }
        expectAuthError("INVALID_ID_TOKEN") { _ = try o.h.service.profiles.me(idToken: idToken) }
    }

    @Test("the 6-digit code typed in the browser that asked signs in too (amr otp)")
    func sixDigitCode() throws {
        let o = try OIDCHarness()
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        _ = try o.flow.sendLink(request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com")
        let wrong = try o.flow.completeWithCode(request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com", code: "000000", session: nil)
        #expect(wrong.newSession == nil)
        guard case .checkMail(_, _, retry: true) = wrong.outcome else {
            Issue.record("a wrong code did not ask again: \(wrong)")
            return
        }
        let answer = try o.flow.completeWithCode(
            request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com", code: try o.h.lastCode(), session: nil)
        guard case .redirect(let url) = answer.outcome else {
            Issue.record("not redirected: \(answer)")
            return
        }
        let body = try o.exchange(try #require(OIDCHarness.query(url, "code")))
        #expect(try OIDCHarness.claims(body["id_token"])["amr"] as? [String] == ["otp"])
    }

    @Test("a browser session signs the next authorization in without mail; prompt=login, max_age=0 and prompt=none follow the spec")
    func browserSession() throws {
        let o = try OIDCHarness()
        let (_, session) = try o.signInByLink("ada@example.com")
        let mails = o.h.store.queuedMail().count
        guard case .redirect(let again) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: session) else {
            Issue.record("the session did not sign in")
            return
        }
        #expect(OIDCHarness.query(again, "code") != nil)
        #expect(o.h.store.queuedMail().count == mails)
        for extra in [[("prompt", "login")], [("max_age", "0")]] {
            o.h.clock.advance(by: 2)
            guard case .signIn = try o.flow.authorize(o.parameters(extra: extra), browser: OIDCHarness.browser, session: session) else {
                Issue.record("\(extra) did not ask for a fresh sign-in")
                return
            }
        }
        guard case .redirect(let none) = try o.flow.authorize(o.parameters(extra: [("prompt", "none")]), browser: OIDCHarness.browser, session: nil)
        else {
            Issue.record("prompt=none showed a page")
            return
        }
        #expect(OIDCHarness.query(none, "error") == "login_required")
        #expect(OIDCHarness.query(none, "iss") == "https://auth.example.com")
        #expect(OIDCHarness.query(none, "state") == "st-1")
    }

    @Test("a client not first-party asks consent once; deny answers access_denied; prompt=consent asks again")
    func consent() throws {
        let o = try OIDCHarness()
        let notes = o.parameters(client: "notes", redirect: "http://127.0.0.1:51234/callback", scope: "openid email")
        guard case .signIn(let pending, _) = try o.flow.authorize(notes, browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        _ = try o.flow.sendLink(request: pending.id, browser: OIDCHarness.browser, email: "cy@example.com")
        let answer = try o.flow.completeWithLink(request: pending.id, browser: OIDCHarness.browser, oobCode: try o.lastOOBCode(), session: nil)
        guard case .consent(let shown, let email) = answer.outcome, let session = answer.newSession else {
            Issue.record("no consent page: \(answer)")
            return
        }
        #expect(email == "cy@example.com")
        #expect(shown.scopes == ["openid", "email"])
        guard case .redirect(let denied) = try o.flow.consent(request: shown.id, browser: OIDCHarness.browser, session: session, allow: false) else {
            Issue.record("deny did not redirect")
            return
        }
        #expect(OIDCHarness.query(denied, "error") == "access_denied")
        guard case .consent(let second, _) = try o.flow.authorize(notes, browser: OIDCHarness.browser, session: session) else {
            Issue.record("no consent page after a denial")
            return
        }
        guard case .redirect(let allowed) = try o.flow.consent(request: second.id, browser: OIDCHarness.browser, session: session, allow: true) else {
            Issue.record("allow did not redirect")
            return
        }
        #expect(allowed.hasPrefix("http://127.0.0.1:51234/callback?code="))
        let body = try o.exchange(try #require(OIDCHarness.query(allowed, "code")), client: "notes", redirect: "http://127.0.0.1:51234/callback")
        #expect(body["refresh_token"] == nil)
        guard case .redirect = try o.flow.authorize(notes, browser: OIDCHarness.browser, session: session) else {
            Issue.record("a remembered consent asked again")
            return
        }
        guard case .consent = try o.flow.authorize(notes + [("prompt", "consent")], browser: OIDCHarness.browser, session: session) else {
            Issue.record("prompt=consent did not ask")
            return
        }
    }

    @Test("refresh rotates; the old token again revokes the family; revocation ends it")
    func refreshAndRevoke() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let first = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        guard case .string(let refresh)? = first["refresh_token"] else { throw FlowHarness.HarnessError.noMail }
        let form: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        guard case .object(let second) = try o.flow.token(form, authorization: nil), case .string(let next)? = second["refresh_token"] else {
            throw FlowHarness.HarnessError.noMail
        }
        #expect(next != refresh)
        #expect(try OIDCHarness.claims(second["id_token"])["aud"] as? String == "grafana")
        o.h.clock.advance(by: 60)
        #expect(oauthError { _ = try o.flow.token(form, authorization: nil) } == "invalid_grant")
        let successor: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", next), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        #expect(oauthError { _ = try o.flow.token(successor, authorization: nil) } == "invalid_grant", "reuse revoked the family")

        let (again, _) = try o.signInByLink("ada@example.com")
        let fresh = try o.exchange(try #require(OIDCHarness.query(again, "code")))
        guard case .string(let live)? = fresh["refresh_token"] else { throw FlowHarness.HarnessError.noMail }
        try o.flow.revoke([("token", live), ("client_id", "grafana"), ("client_secret", o.confidentialSecret)], authorization: nil)
        let revoked: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", live), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        #expect(oauthError { _ = try o.flow.token(revoked, authorization: nil) } == "invalid_grant")
    }

    @Test("client_secret_basic works, with the header's parts form-encoded")
    func basicAuthentication() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let header = "Basic " + Data("grafana:\(o.confidentialSecret)".utf8).base64EncodedString()
        let form: [(name: String, value: String)] = [
            ("grant_type", "authorization_code"), ("code", try #require(OIDCHarness.query(redirect, "code"))),
            ("redirect_uri", "https://grafana.example.com/login/generic_oauth"), ("code_verifier", OIDCHarness.verifier),
        ]
        guard case .object(let body) = try o.flow.token(form, authorization: header) else { throw FlowHarness.HarnessError.noMail }
        #expect(body["id_token"] != nil)
    }
}

@Suite("OIDC flow: the attacker's sequences")
struct OIDCAttackTests {
    @Test("a replayed code is invalid_grant and revokes the refresh token it gave")
    func replayedCode() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let code = try #require(OIDCHarness.query(redirect, "code"))
        let body = try o.exchange(code)
        guard case .string(let refresh)? = body["refresh_token"] else { throw FlowHarness.HarnessError.noMail }
        #expect(oauthError { _ = try o.exchange(code) } == "invalid_grant")
        let form: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        #expect(oauthError { _ = try o.flow.token(form, authorization: nil) } == "invalid_grant")
    }

    @Test("client B cannot redeem client A's code, and A still can afterwards")
    func otherClientsCode() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let code = try #require(OIDCHarness.query(redirect, "code"))
        #expect(oauthError { _ = try o.exchange(code, client: "legacy") } == "invalid_grant")
        #expect(oauthError { _ = try o.exchange(code, client: "notes", redirect: "http://127.0.0.1/callback") } == "invalid_grant")
        #expect(try o.exchange(code)["id_token"] != nil)
    }

    @Test("PKCE: a missing or wrong verifier, a plain or missing challenge, and a verifier for a code without one are refused")
    func pkce() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let code = try #require(OIDCHarness.query(redirect, "code"))
        #expect(oauthError { _ = try o.exchange(code, verifier: nil) } == "invalid_grant")
        #expect(oauthError { _ = try o.exchange(code, verifier: String(repeating: "x", count: 50)) } == "invalid_grant")
        #expect(try o.exchange(code)["id_token"] != nil, "refusals consumed nothing")

        for extra in [[("code_challenge", OIDCHarness.verifier), ("code_challenge_method", "plain")], [("code_challenge", OIDCHarness.challenge)]] {
            let outcome = try o.flow.authorize(o.parameters(extra: extra, pkce: false), browser: OIDCHarness.browser, session: nil)
            guard case .redirect(let url) = outcome else {
                Issue.record("\(extra) was taken")
                continue
            }
            #expect(OIDCHarness.query(url, "error") == "invalid_request")
        }
        guard case .redirect(let missing) = try o.flow.authorize(o.parameters(pkce: false), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("a request without PKCE was taken")
            return
        }
        #expect(OIDCHarness.query(missing, "error") == "invalid_request")

        // A client allowed no PKCE: a verifier sent for its challenge-less code is a downgrade.
        let legacy = o.parameters(client: "legacy", redirect: "https://legacy.example.com/cb", scope: "openid email", pkce: false)
        let (legacyRedirect, _) = try o.signInByLink("ada@example.com", parameters: legacy)
        let legacyCode = try #require(OIDCHarness.query(legacyRedirect, "code"))
        #expect(oauthError { _ = try o.exchange(legacyCode, client: "legacy", redirect: "https://legacy.example.com/cb") } == "invalid_grant")
        #expect(try o.exchange(legacyCode, client: "legacy", verifier: nil, redirect: "https://legacy.example.com/cb")["id_token"] != nil)
    }

    @Test("redirect URI tricks are refused on Postern's page, never redirected to")
    func redirectTricks() throws {
        let o = try OIDCHarness()
        let tricks = [
            "https://grafana.example.com/login/generic_oauth/../../evil", "https://grafana.example.com/login/generic_oauthx",
            "https://grafana.example.com/login/generic_oau", "https://GRAFANA.example.com/login/generic_oauth",
            "https://grafana.example.com@evil.example/login/generic_oauth", "https://grafana.example.com/login/generic_oauth#x",
            "https://grafana.example.com:8443/login/generic_oauth", "http://grafana.example.com/login/generic_oauth",
            "https://grafana.example.com/login/generic_oauth?x=1", "https://evil.example/login/generic_oauth",
        ]
        for trick in tricks {
            let outcome = try o.flow.authorize(o.parameters(redirect: trick), browser: OIDCHarness.browser, session: nil)
            #expect(outcome == .refused(.badRedirectURI), "\(trick)")
        }
        #expect(try o.flow.authorize(o.parameters(client: "nobody"), browser: OIDCHarness.browser, session: nil) == .refused(.unknownClient))
        // At the token endpoint too: the code's redirect URI, exactly.
        let (redirect, _) = try o.signInByLink("ada@example.com")
        let code = try #require(OIDCHarness.query(redirect, "code"))
        #expect(oauthError { _ = try o.exchange(code, redirect: "https://grafana.example.com/login/generic_oauth/") } == "invalid_grant")
    }

    @Test("login CSRF: a link sent for one browser completes nothing in another, nor does another browser's request")
    func loginCSRF() throws {
        let o = try OIDCHarness()
        // The attacker starts a sign-in for their own address in their browser…
        guard case .signIn(let attackers, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.otherBrowser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        let sent = try o.flow.sendLink(request: attackers.id, browser: OIDCHarness.otherBrowser, email: "mallory@example.com")
        guard case .checkMail = sent else {
            Issue.record("not sent: \(sent)")
            return
        }
        let attackersLink = try o.lastOOBCode()
        // …and makes the victim's browser post it, with the attacker's request or one of the victim's own.
        let stolen = try o.flow.completeWithLink(request: attackers.id, browser: OIDCHarness.browser, oobCode: attackersLink, session: nil)
        #expect(stolen.outcome == .refused(.otherBrowser))
        #expect(stolen.newSession == nil)
        guard case .signIn(let victims, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        let mixed = try o.flow.completeWithLink(request: victims.id, browser: OIDCHarness.browser, oobCode: attackersLink, session: nil)
        #expect(mixed.outcome == .refused(.otherBrowser))
        #expect(mixed.newSession == nil)
        // A mail scanner with its own cookies, pressing every button, completes nothing either.
        let scanner = try o.flow.completeWithLink(request: attackers.id, browser: "scanner-cookie-CCCCCCCCCCCCCCCCCCCCCCCCCCCA", oobCode: attackersLink, session: nil)
        #expect(scanner.outcome == .refused(.otherBrowser))
        #expect(try o.flow.continuation(request: attackers.id, browser: nil) == .failure(.otherBrowser))
        // The attacker's own browser still completes it: nothing was burnt.
        let own = try o.flow.completeWithLink(request: attackers.id, browser: OIDCHarness.otherBrowser, oobCode: attackersLink, session: nil)
        #expect(own.newSession != nil)
    }

    @Test("a link asked for through the API with this page's continue URL, not bound to the browser, completes nothing here")
    func unboundLink() throws {
        let o = try OIDCHarness()
        guard case .signIn(let victims, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        // The attacker asks for a link to their own address, continuing at the victim's request.
        try o.h.service.emailLink.send(EmailLinkRequest(email: "mallory@example.com", continueURL: o.flow.resumeURL(request: victims.id)))
        let answer = try o.flow.completeWithLink(request: victims.id, browser: OIDCHarness.browser, oobCode: try o.lastOOBCode(), session: nil)
        #expect(answer.outcome == .refused(.otherBrowser))
        #expect(answer.newSession == nil)
        #expect(try o.h.service.addresses.inspect(link: nil, oobCode: try o.lastOOBCode()).mode == .signIn, "not consumed")
    }

    @Test("a disabled user's tokens and browser session stop at once; a deleted user's too")
    func disabledUser() throws {
        let o = try OIDCHarness()
        let (redirect, session) = try o.signInByLink("ada@example.com")
        let body = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        guard case .string(let access)? = body["access_token"], case .string(let refresh)? = body["refresh_token"] else { throw FlowHarness.HarnessError.noMail }
        let uid = try #require(try OIDCHarness.claims(body["id_token"])["sub"] as? String)
        _ = try o.h.service.operators.updateUser(uid: uid, disabled: true, emailVerified: nil, displayName: nil)
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + access) } == "invalid_token")
        let form: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        #expect(oauthError { _ = try o.flow.token(form, authorization: nil) } == "invalid_grant")
        guard case .signIn = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: session) else {
            Issue.record("a disabled user's browser session still signed in")
            return
        }

        let (other, otherSession) = try o.signInByLink("bob@example.com")
        let otherBody = try o.exchange(try #require(OIDCHarness.query(other, "code")))
        guard case .string(let otherAccess)? = otherBody["access_token"] else { throw FlowHarness.HarnessError.noMail }
        let otherUID = try #require(try OIDCHarness.claims(otherBody["id_token"])["sub"] as? String)
        try o.h.service.operators.deleteUser(uid: otherUID)
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + otherAccess) } == "invalid_token")
        guard case .signIn = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: otherSession) else {
            Issue.record("a deleted user's browser session still signed in")
            return
        }
    }

    @Test("client authentication: a wrong secret, a public client with a secret, an unknown client, two methods at once")
    func clientAuthentication() throws {
        let o = try OIDCHarness()
        let base: [(name: String, value: String)] = [("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", "https://grafana.example.com/login/generic_oauth")]
        #expect(oauthError { _ = try o.flow.token(base + [("client_id", "grafana"), ("client_secret", "wrong")], authorization: nil) } == "invalid_client")
        #expect(oauthError { _ = try o.flow.token(base + [("client_id", "grafana")], authorization: nil) } == "invalid_client")
        #expect(oauthError { _ = try o.flow.token(base + [("client_id", "notes"), ("client_secret", "anything")], authorization: nil) } == "invalid_client")
        #expect(oauthError { _ = try o.flow.token(base + [("client_id", "nobody")], authorization: nil) } == "invalid_client")
        let header = "Basic " + Data("grafana:\(o.confidentialSecret)".utf8).base64EncodedString()
        #expect(oauthError { _ = try o.flow.token(base + [("client_secret", o.confidentialSecret)], authorization: header) } == "invalid_request")
        #expect(oauthError { _ = try o.flow.token(base + [("code", "y"), ("client_id", "grafana")], authorization: nil) } == "invalid_request")
        #expect(oauthError { _ = try o.flow.token([("grant_type", "password"), ("client_id", "notes")], authorization: nil) } == "unsupported_grant_type")
    }

    @Test("an API ID token, an access token or another client's token is no id_token_hint; logout redirects only where registered")
    func logout() throws {
        let o = try OIDCHarness()
        let (redirect, session) = try o.signInByLink("ada@example.com")
        let body = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        guard case .string(let idToken)? = body["id_token"], case .string(let access)? = body["access_token"] else { throw FlowHarness.HarnessError.noMail }
        // Without a hint: ask first; an access token or an API session is no hint.
        let api = try o.h.service.sessions.signInAnonymously().idToken
        for hint in [nil, access, api] {
            let parameters = ["post_logout_redirect_uri": "https://grafana.example.com/login", "client_id": "grafana"].merging(hint.map { ["id_token_hint": $0] } ?? [:]) { $1 }
            guard case .confirm = try o.flow.logout(parameters, session: session, confirmed: false) else {
                Issue.record("logged out without asking, hint \(String(describing: hint?.prefix(10)))")
                return
            }
        }
        // An unregistered place to go back to: the page, never a redirect.
        let unregistered = try o.flow.logout(
            ["id_token_hint": idToken, "post_logout_redirect_uri": "https://evil.example/"], session: session, confirmed: false)
        #expect(unregistered == .signedOut)
        guard case .signIn = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: session) else {
            Issue.record("the session outlived its logout")
            return
        }
        let (_, second) = try o.signInByLink("ada@example.com")
        let back = try o.flow.logout(
            ["id_token_hint": idToken, "post_logout_redirect_uri": "https://grafana.example.com/login", "state": "s"], session: second, confirmed: false)
        #expect(back == .redirect("https://grafana.example.com/login?state=s"))
        #expect(try o.flow.logout(["id_token_hint": idToken, "client_id": "notes"], session: nil, confirmed: false) == .refused(.unknownClient))
    }

    @Test("revoking a grant that gave no refresh token ends its access token at userinfo; a replayed code ends the first access token")
    func revokedAccessToken() throws {
        let o = try OIDCHarness()
        let plain = o.parameters(scope: "openid email")
        let (redirect, _) = try o.signInByLink("ada@example.com", parameters: plain)
        let body = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        guard case .string(let access)? = body["access_token"] else { throw FlowHarness.HarnessError.noMail }
        #expect(body["refresh_token"] == nil)
        _ = try o.flow.userinfo(authorization: "Bearer " + access)
        try o.flow.revoke([("token", access), ("client_id", "grafana"), ("client_secret", o.confidentialSecret)], authorization: nil)
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + access) } == "invalid_token")
        // Another client cannot revoke it: its own revocation changes nothing.
        let (second, _) = try o.signInByLink("ada@example.com", parameters: plain)
        let code = try #require(OIDCHarness.query(second, "code"))
        let kept = try o.exchange(code)
        guard case .string(let keptAccess)? = kept["access_token"] else { throw FlowHarness.HarnessError.noMail }
        try o.flow.revoke([("token", keptAccess), ("client_id", "notes")], authorization: nil)
        _ = try o.flow.userinfo(authorization: "Bearer " + keptAccess)
        // The code replayed: what it gave dies.
        #expect(oauthError { _ = try o.exchange(code) } == "invalid_grant")
        #expect(oauthError { _ = try o.flow.userinfo(authorization: "Bearer " + keptAccess) } == "invalid_token")
    }

    @Test("a pending request expires, and a removed client's request is not finished")
    func pendingExpiry() throws {
        let o = try OIDCHarness()
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        o.h.clock.advance(by: 901)
        #expect(try o.flow.sendLink(request: pending.id, browser: OIDCHarness.browser, email: "a@example.com") == .refused(.requestExpired))
        guard case .signIn(let second, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        _ = try o.h.store.write { tx in try tx.deleteOIDCClient(id: "grafana") }
        #expect(try o.flow.restart(request: second.id, browser: OIDCHarness.browser) == .refused(.unknownClient))
    }
}
