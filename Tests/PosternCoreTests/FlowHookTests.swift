import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing

/// The operator's backend as the hooks see it: answers per hook type from a script, records each
/// call (its type, data and headers), and checks that no transaction is open while it is asked.
final class ScriptedHook: HookHTTP {
    struct Call: Sendable {
        let type: String
        let data: [String: JSONValue]
        let headers: WebhookSignedHeaders
        let body: String
    }

    /// The answer to a call of `type`; nil: none came in time (the transport's failure).
    typealias Answer = @Sendable (_ type: String, _ data: [String: JSONValue]) -> ProviderHTTPResponse?
    private let answer: Mutex<Answer>
    private let recorded = Mutex<[Call]>([])
    /// Run at each call, before answering (a change the store sees while the hook is asked).
    let during: Mutex<(@Sendable (String) -> Void)?> = Mutex(nil)
    /// A store whose writer must be free while a hook is asked (``watch(_:)``).
    private let watched = Mutex<(any Store)?>(nil)
    private let held = Mutex(0)

    init(_ answer: @escaping Answer) { self.answer = Mutex(answer) }

    /// Checks at each call that `store` takes a write from another thread: no transaction waits on the hook.
    func watch(_ store: any Store) { watched.withLock { $0 = store } }
    /// Calls during which the watched store's writer was held.
    var heldStore: Int { held.withLock { $0 } }

    var calls: [Call] { recorded.withLock { $0 } }
    var types: [String] { calls.map(\.type) }

    func answer(_ next: @escaping Answer) { answer.withLock { $0 = next } }

    func post(_ url: String, headers: WebhookSignedHeaders, body: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        let envelope = try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
        guard case .object(let object)? = envelope, case .string(let type)? = object["type"], case .object(let data)? = object["data"] else {
            throw ProviderHTTPError("the request is not the envelope")
        }
        recorded.withLock { $0.append(Call(type: type, data: data, headers: headers, body: body)) }
        if let store = watched.withLock({ $0 }) {
            // A write from another thread completes only if no transaction waits on this call
            // (the bound is a failure's, not a pause: a free store answers at once).
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = try? store.write { _ in 1 }
                done.signal()
            }
            if done.wait(timeout: .now() + 10) == .timedOut {
                held.withLock { $0 += 1 }
                throw ProviderHTTPError("the store was held while the hook was asked")
            }
        }
        during.withLock { $0 }?(type)
        guard let answer = answer.withLock({ $0 })(type, data) else { throw ProviderHTTPError("Timeout was reached") }
        return answer
    }

    static func json(_ text: String, status: Int = 200) -> ProviderHTTPResponse {
        ProviderHTTPResponse(status: status, body: Array(text.utf8), cacheControl: nil)
    }

    static let allowAll: Answer = { type, _ in type == "token_claims" ? json(#"{"claims":{}}"#) : json(#"{"decision":"allow"}"#) }
}

/// The hooks that decide (issue 48 point 5) over the in-memory store: asked outside the
/// transaction with a signed request, allow, deny with a message, claims in the tokens, and each
/// way a hook fails, closed and open.
@Suite("Hooks: before sign-up, before sign-in, token claims")
struct FlowHookTests {
    static let secretText = "whsec_" + Data(Array(repeating: UInt8(42), count: 32)).base64EncodedString()

    static func harness(
        _ hook: ScriptedHook, hooks: [HookKind] = HookKind.allCases, failure: HookConfiguration.FailureMode = .closed
    ) throws -> FlowHarness {
        let secret = try WebhookSecret(secretText)
        return try FlowHarness(hookHTTP: hook) { config in
            for kind in hooks { config.hooks.urls[kind] = "https://hooks.example.com/\(kind.rawValue)" }
            config.hooks.secrets = [secret]
            config.hooks.failure = failure
            config.phoneSignIn = true
            config.sms.phoneSignIn = true
        }
    }

    /// The claims of a session's ID token (its signature is the flows' own tests' subject).
    static func claims(_ session: Session) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: JSONWebToken.parse(session.idToken).claims) as? [String: Any])
    }

    @Test("a new address asks before_sign_up (signed as the webhooks are, outside the transaction) with the uid the account gets")
    func signUpAsksBeforeSignUp() throws {
        let checked = ScriptedHook(ScriptedHook.allowAll)
        let hc = try Self.harness(checked, hooks: [.beforeSignUp, .beforeSignIn])
        checked.watch(hc.store)
        let login = try hc.signIn("new@example.com")
        #expect(login.isNewUser)
        #expect(checked.types == ["before_sign_up"])
        let call = try #require(checked.calls.first)
        #expect(call.data["uid"] == .string(login.uid))
        #expect(call.data["email"] == .string("new@example.com"))
        #expect(call.data["method"] == .string("emailLink"))
        #expect(call.data["isNewUser"] == .bool(true))
        #expect(call.headers.id.hasPrefix("msg_"))
        #expect(try WebhookSecret(Self.secretText).signed(call.headers.signature, id: call.headers.id, timestamp: call.headers.timestamp, body: call.body))
        // Signed in again: the account exists, so before_sign_in is asked, never before_sign_up.
        _ = try hc.signIn("new@example.com")
        #expect(checked.types == ["before_sign_up", "before_sign_in"])
        #expect(checked.heldStore == 0)
    }

    @Test("sign-ups closed by --sign-up-domains: a link minted while open is refused SIGN_UP_NOT_ALLOWED before before_sign_up is asked; an allowed domain asks it")
    func signUpPolicyComesBeforeTheHook() throws {
        let hook = ScriptedHook(ScriptedHook.allowAll)
        let secret = try WebhookSecret(Self.secretText)
        let h = try FlowHarness(hookHTTP: hook) { config in
            config.hooks.urls[.beforeSignUp] = "https://hooks.example.com/before_sign_up"
            config.hooks.secrets = [secret]
            config.signUp = SignUpPolicy(mode: .open, domains: ["example.com"])
        }
        let allowed = try h.signIn("ann@example.com")
        #expect(allowed.isNewUser && hook.types == ["before_sign_up"])
        // A link minted for another domain before the policy named domains: the policy refuses it
        // first, and the operator's backend is never asked about an account that cannot be made.
        let before = try FlowHarness(hookHTTP: hook, restarting: h) { config in
            config.hooks.urls[.beforeSignUp] = "https://hooks.example.com/before_sign_up"
            config.hooks.secrets = [secret]
        }
        try before.service.emailLink.send(EmailLinkRequest(email: "eve@example.org"))
        let link = try before.lastLink()
        let closed = try FlowHarness(hookHTTP: hook, restarting: before) { config in
            config.hooks.urls[.beforeSignUp] = "https://hooks.example.com/before_sign_up"
            config.hooks.secrets = [secret]
            config.signUp = SignUpPolicy(mode: .open, domains: ["example.com"])
        }
        expectAuthError("SIGN_UP_NOT_ALLOWED") { _ = try closed.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(hook.types == ["before_sign_up"], "the refused sign-up asked no hook")
    }

    @Test("deny: 403 HOOK_DENIED with the hook's message, plain and capped; nothing created, the link not used up")
    func denyRefusesAndKeepsTheLink() throws {
        let hook = ScriptedHook { _, _ in
            ScriptedHook.json(#"{"decision":"deny","message":"<b>No</b>\u0007 sign-ups\n\nfrom <script>x</script> here"}"#)
        }
        let h = try Self.harness(hook, hooks: [.beforeSignUp])
        try h.service.emailLink.send(EmailLinkRequest(email: "blocked@example.com"))
        let link = try h.lastLink()
        let error = expectAuthError("HOOK_DENIED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(error?.kind == .forbidden)
        // Plain text: control characters and line breaks gone; the pages escape the rest as every value.
        #expect(error?.message == "<b>No</b> sign-ups from <script>x</script> here")
        #expect(try h.store.read { try $0.account(address: EmailAddress.parse("blocked@example.com")) } == nil)
        #expect(hook.calls.count == 1)
        // The operator changes their mind: the same link still signs in.
        hook.answer(ScriptedHook.allowAll)
        #expect(try h.service.emailLink.complete(EmailLinkCompletion(link: link)).isNewUser)

        let long = ScriptedHook { _, _ in ScriptedHook.json(#"{"decision":"deny","message":""# + String(repeating: "é", count: 500) + #""}"#) }
        let hl = try Self.harness(long, hooks: [.beforeSignUp])
        let capped = expectAuthError("HOOK_DENIED") { try hl.signIn("long@example.com") }
        #expect(capped?.message.count == 200)
        let silent = ScriptedHook { _, _ in ScriptedHook.json(#"{"decision":"deny"}"#) }
        let hs = try Self.harness(silent, hooks: [.beforeSignUp])
        #expect(expectAuthError("HOOK_DENIED") { try hs.signIn("silent@example.com") }?.message == AuthError.hookDeniedMessage)
    }

    @Test("password sign-in asks before_sign_in; a wrong password asks nothing; an anonymous sign-in asks before_sign_up, and a deny makes no account")
    func otherSignInsAsk() throws {
        let hook = ScriptedHook(ScriptedHook.allowAll)
        let h = try Self.harness(hook, hooks: [.beforeSignUp, .beforeSignIn], failure: .closed)
        try h.signUp("pw@example.com", password: "correct horse battery")
        hook.answer { _, _ in ScriptedHook.json(#"{"decision":"deny","message":"closed today"}"#) }
        let denied = expectAuthError("HOOK_DENIED") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "correct horse battery", idToken: nil, allowMigration: nil)
        }
        #expect(denied?.message == "closed today")
        #expect(hook.calls.last?.data["method"] == .string("password"))
        #expect(hook.types == ["before_sign_up", "before_sign_in"])
        // A wrong password never reaches the hook.
        _ = expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "pw@example.com", password: "wrong horse battery", idToken: nil, allowMigration: nil)
        }
        #expect(hook.calls.count == 2)
        let accounts = h.store.snapshot().accounts.count
        expectAuthError("HOOK_DENIED") { _ = try h.service.sessions.signInAnonymously() }
        #expect(hook.types == ["before_sign_up", "before_sign_in", "before_sign_up"])
        #expect(hook.calls.last?.data["method"] == .string("anonymous") && hook.calls.last?.data["email"] == nil)
        #expect(h.store.snapshot().accounts.count == accounts, "a denied anonymous sign-in makes no account")
        hook.answer(ScriptedHook.allowAll)
        let anonymous = try h.service.sessions.signInAnonymously()
        #expect(hook.calls.last?.data["uid"] == .string(anonymous.uid) && hook.calls.last?.data["isNewUser"] == .bool(true))
    }

    @Test("a phone sign-in asks before_sign_up with the number, then before_sign_in; a deny leaves the code for another try")
    func phoneSignInAsks() throws {
        let hook = ScriptedHook { _, _ in ScriptedHook.json(#"{"decision":"deny","message":"not yet"}"#) }
        let h = try Self.harness(hook, hooks: [.beforeSignUp, .beforeSignIn])
        let number = FlowPhoneSignInTests.number
        let code = try FlowPhoneSignInTests.send(h)
        #expect(expectAuthError("HOOK_DENIED") { _ = try FlowPhoneSignInTests.complete(h, code) }?.message == "not yet")
        #expect(hook.calls.last?.data["phoneNumber"] == .string(number))
        #expect(hook.calls.last?.data["method"] == .string("phone"))
        hook.answer(ScriptedHook.allowAll)
        let login = try FlowPhoneSignInTests.complete(h, code)
        #expect(login.isNewUser)
        #expect(hook.types == ["before_sign_up", "before_sign_up"])
        _ = try FlowPhoneSignInTests.complete(h, try FlowPhoneSignInTests.send(h))
        #expect(hook.types.last == "before_sign_in")
        #expect(hook.calls.last?.data["uid"] == .string(login.uid))
    }

    @Test("a hook that fails — garbage, 500, over 16 KiB, no answer in time, the wrong shape — refuses with HOOK_FAILED when closed")
    func failuresClosed() throws {
        let failures: [ScriptedHook.Answer] = [
            { _, _ in ScriptedHook.json("not json at all") },
            { _, _ in ScriptedHook.json(#"{"decision":"allow"}"#, status: 500) },
            { _, _ in ScriptedHook.json(#"{"decision":"allow","pad":""# + String(repeating: "x", count: 17 * 1024) + #""}"#) },
            { _, _ in nil },
            { _, _ in ScriptedHook.json(#"{"decision":"maybe"}"#) },
            { _, _ in ScriptedHook.json(#"["allow"]"#) },
        ]
        for (index, failure) in failures.enumerated() {
            let hook = ScriptedHook(failure)
            let h = try Self.harness(hook, hooks: [.beforeSignUp])
            let error = expectAuthError("HOOK_FAILED") { try h.signIn("fail\(index)@example.com") }
            #expect(error?.kind == .unavailable)
            // Nothing of the hook's answer or the reason reaches the caller.
            #expect(error?.message == AuthError.hookFailed.message)
            #expect(try h.store.read { try $0.account(address: EmailAddress.parse("fail\(index)@example.com")) } == nil)
            #expect(h.service.hooks.metrics.snapshot().first { $0.hook == .beforeSignUp && $0.outcome == .failure }?.count == 1)
        }
    }

    @Test("with --hook-failure open the same failures let the sign-in go on, with no claims added")
    func failuresOpen() throws {
        let hook = ScriptedHook { _, _ in ScriptedHook.json("", status: 503) }
        let h = try Self.harness(hook, failure: .open)
        let login = try h.signIn("open@example.com")
        #expect(login.isNewUser)
        #expect(hook.types == ["before_sign_up", "token_claims"])
        let claims = try Self.claims(login.session)
        #expect(claims["sub"] as? String == login.uid)
        #expect(h.service.hooks.metrics.snapshot().filter { $0.outcome == .failure }.map(\.count).reduce(0, +) == 2)
    }

    @Test("token_claims: merged into the ID token, asked again at refresh; sub, iss, exp or another reserved claim is a failure")
    func tokenClaims() throws {
        let hook = ScriptedHook { type, data in
            guard type == "token_claims" else { return ScriptedHook.json(#"{"decision":"allow"}"#) }
            return ScriptedHook.json(#"{"claims":{"role":"editor","org":{"id":7}}}"#)
        }
        let h = try Self.harness(hook)
        let login = try h.signIn("claims@example.com")
        var claims = try Self.claims(login.session)
        #expect(claims["role"] as? String == "editor")
        #expect((claims["org"] as? [String: Any])?["id"] as? Int == 7)
        #expect(claims["sub"] as? String == login.uid)
        #expect(hook.types == ["before_sign_up", "token_claims"])
        #expect(hook.calls.last?.data["uid"] == .string(login.uid))

        hook.answer { _, _ in ScriptedHook.json(#"{"claims":{"role":"admin"}}"#) }
        let refreshed = try h.service.sessions.refresh(login.session.refreshToken)
        claims = try Self.claims(refreshed)
        #expect(claims["role"] as? String == "admin")
        #expect(hook.types.last == "token_claims")

        for reserved in ["sub", "iss", "exp", "aud", "email", "sv", "sid", "amr"] {
            hook.answer { _, _ in ScriptedHook.json(#"{"claims":{"\#(reserved)":"attacker"}}"#) }
            _ = expectAuthError("HOOK_FAILED") { _ = try h.service.sessions.refresh(refreshed.refreshToken) }
        }
        hook.answer { _, _ in ScriptedHook.json(#"{"claims":{"big":""# + String(repeating: "x", count: 2100) + #""}}"#) }
        _ = expectAuthError("HOOK_FAILED") { _ = try h.service.sessions.refresh(refreshed.refreshToken) }
        // The refused refreshes used nothing up: the token still refreshes.
        hook.answer { _, _ in ScriptedHook.json(#"{"claims":{}}"#) }
        let after = try h.service.sessions.refresh(refreshed.refreshToken)
        claims = try Self.claims(after)
        #expect(claims["role"] == nil)
        #expect(claims["sub"] as? String == login.uid)

        // Open: a hook naming sub is ignored, and Postern's sub stays.
        let open = ScriptedHook { type, _ in
            type == "token_claims" ? ScriptedHook.json(#"{"claims":{"sub":"someone-else","iss":"https://evil.example"}}"#) : ScriptedHook.json(#"{"decision":"allow"}"#)
        }
        let ho = try Self.harness(open, failure: .open)
        let openLogin = try ho.signIn("open-claims@example.com")
        let openClaims = try Self.claims(openLogin.session)
        #expect(openClaims["sub"] as? String == openLogin.uid)
        #expect(openClaims["iss"] as? String == "https://auth.example.com")
    }

    @Test("what the write finds after the hook's answer is checked again: the account made meanwhile is asked about as a sign-in")
    func recheckedInsideTheWrite() throws {
        let hook = ScriptedHook(ScriptedHook.allowAll)
        let h = try Self.harness(hook, hooks: [.beforeSignUp, .beforeSignIn])
        try h.service.emailLink.send(EmailLinkRequest(email: "race@example.com"))
        let link = try h.lastLink()
        let store = h.store
        let now = h.clock.unixSeconds()
        hook.during.withLock {
            $0 = { type in
                guard type == "before_sign_up" else { return }
                // While the hook thinks, the address gets an account by another way in.
                _ = try? store.write { tx in
                    try tx.insertAccount(Account(uid: "made-meanwhile", email: try EmailAddress.parse("race@example.com"), emailVerified: true, createdAt: now))
                }
            }
        }
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
        #expect(!login.isNewUser)
        #expect(login.uid == "made-meanwhile")
        #expect(hook.types == ["before_sign_up", "before_sign_in"])
        #expect(hook.calls.last?.data["uid"] == .string("made-meanwhile"))
    }

    @Test("the OpenID Connect ID and access tokens carry the claims, asked with the client's id; the hosted page shows a deny's message")
    func oidcTokensAndPage() throws {
        let hook = ScriptedHook { type, data in
            guard type == "token_claims" else { return ScriptedHook.json(#"{"decision":"allow"}"#) }
            return ScriptedHook.json(#"{"claims":{"tenant":"acme"}}"#)
        }
        let o = try OIDCHarness(hookHTTP: hook) { config in
            for kind in HookKind.allCases { config.hooks.urls[kind] = "https://hooks.example.com/\(kind.rawValue)" }
            config.hooks.secrets = [try! WebhookSecret(Self.secretText)]
        }
        let (url, _) = try o.signInByLink("rp@example.com")
        let code = try #require(OIDCHarness.query(url, "code"))
        let body = try o.exchange(code)
        let id = try OIDCHarness.claims(body["id_token"])
        let access = try OIDCHarness.claims(body["access_token"])
        #expect(id["tenant"] as? String == "acme")
        #expect(access["tenant"] as? String == "acme")
        #expect(id["aud"] as? String == "grafana")
        let asked = try #require(hook.calls.last)
        #expect(asked.type == "token_claims")
        #expect(asked.data["client_id"] == .string("grafana"))

        hook.answer { _, _ in ScriptedHook.json(#"{"decision":"deny","message":"Ask <admin> first"}"#) }
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.otherBrowser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        _ = try o.flow.sendLink(request: pending.id, browser: OIDCHarness.otherBrowser, email: "rp@example.com")
        let answer = try o.flow.completeWithLink(request: pending.id, browser: OIDCHarness.otherBrowser, oobCode: try o.lastOOBCode(), session: nil)
        guard case .signIn(_, let retry) = answer.outcome else {
            Issue.record("not the sign-in page again: \(answer.outcome)")
            return
        }
        #expect(retry == .hookDenied(message: "Ask <admin> first"))
        #expect(answer.newSession == nil)
    }
}
