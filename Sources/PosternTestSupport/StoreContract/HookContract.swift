import Foundation
import PosternCore
import PosternCrypto
import Synchronization

/// What the hooks rely on the store for: a sign-in's write that stops to ask a hook rolls back
/// whole and holds nothing while the hook is asked, and runs again with the answer.
enum HookContract {
    /// The operator's backend: answers every decision with `decision` and every token_claims with
    /// `{"claims":{"tier":"gold"}}`; at each call, checks that a write from another thread gets
    /// through (no transaction waits on the hook).
    final class Backend: HookHTTP {
        let store: any Store
        let decision: Mutex<String>
        let types = Mutex<[String]>([])
        let held = Mutex(0)

        init(store: any Store, decision: String) {
            self.store = store
            self.decision = Mutex(decision)
        }

        func post(_ url: String, headers: WebhookSignedHeaders, body: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
            let type = url.split(separator: "/").last.map(String.init) ?? ""
            types.withLock { $0.append(type) }
            let done = DispatchSemaphore(value: 0)
            let store = self.store
            DispatchQueue.global().async {
                _ = try? store.write { _ in 1 }
                done.signal()
            }
            // A bound for the failure only: a free store takes the write at once.
            if done.wait(timeout: .now() + 20) == .timedOut { held.withLock { $0 += 1 } }
            let answer = type == "token_claims" ? #"{"claims":{"tier":"gold"}}"# : #"{"decision":"\#(decision.withLock { $0 })"}"#
            return ProviderHTTPResponse(status: 200, body: Array(answer.utf8), cacheControl: nil)
        }
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("hooks", "a sign-in that asks its hooks rolls back before each call (the store stays free), a deny leaves nothing, an allow signs in once with the claims") { store in
            let backend = Backend(store: store, decision: "deny")
            let secret = try WebhookSecret("whsec_" + Data(repeating: 3, count: 32).base64EncodedString())
            let h = try FlowHarness(store, hookHTTP: backend) { config in
                for kind in [HookKind.beforeSignUp, .beforeSignIn, .tokenClaims] { config.hooks.urls[kind] = "https://hooks.example.com/\(kind.rawValue)" }
                config.hooks.secrets = [secret]
            }
            try h.service.emailLink.send(EmailLinkRequest(email: "hooked@example.com"))
            let link = try h.lastLink()
            let denied = try expectContractThrows(AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
            try expectContract(denied.code, equals: "HOOK_DENIED")
            try expectContract(try h.store.read { try $0.account(address: try EmailAddress.parse("hooked@example.com")) } == nil, "no account after a deny")
            backend.decision.withLock { $0 = "allow" }
            let login = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
            try expectContract(login.isNewUser, "a new account")
            try expectContract(backend.types.withLock { $0 }, equals: ["before_sign_up", "before_sign_up", "token_claims"])
            try expectContract(backend.held.withLock { $0 }, equals: 0, "calls made while the store was held")
            let claims = try JSONSerialization.jsonObject(with: JSONWebToken.parse(login.session.idToken).claims) as? [String: Any]
            try expectContract(claims?["tier"] as? String == "gold" && claims?["sub"] as? String == login.uid, "the claims in the ID token")
            try expectContractThrows(AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
            try expectContract(try h.store.read { try $0.account(uid: login.uid) } != nil)
        },
    ]
}
