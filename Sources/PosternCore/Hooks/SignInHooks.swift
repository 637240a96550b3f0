import PosternAPI

/// The hooks that decide (``HookConfiguration``): asks the operator's backend, over
/// ``HookHTTP``, whether an account may be created or signed in, and which claims its tokens
/// carry. A call is never made inside a transaction: a flow's write that reaches a decision it
/// has no answer for stops (``HookPending``, rolled back), the hook is asked, and the write runs
/// again with the answer, which it checks against what it finds then (``FlowContext/writeAskingHooks(_:)``).
public final class SignInHooks: Sendable {
    let configuration: HookConfiguration
    let http: (any HookHTTP)?
    let clock: any WallClock
    let logger: Logger?
    /// Calls by hook and outcome.
    public let metrics = HookMetrics()

    init(configuration: HookConfiguration, http: (any HookHTTP)?, clock: any WallClock, logger: Logger?) {
        self.configuration = configuration
        self.http = http
        self.clock = clock
        self.logger = logger
    }

    /// Whether `hook` is on (its URL set and a client to call it with).
    func isOn(_ hook: HookKind) -> Bool { http != nil && configuration.urls[hook] != nil }

    /// Calls `hook` about `subject`: its answer, or nil when it is off or failed with
    /// `--hook-failure open`.
    /// - Throws: `AuthError.hookFailed` when it failed with `--hook-failure closed`.
    func ask(_ hook: HookKind, about subject: HookSubject) throws(AuthError) -> HookAnswer? {
        guard let http, let url = configuration.urls[hook] else { return nil }
        let now = clock.unixSeconds()
        let body = subject.body(hook, at: now)
        let id: String
        do { id = try EventLedger.newWebhookID() } catch { throw .internalError("\(error)") }
        let headers = WebhookSignedHeaders(id: id, timestamp: now, body: body, secrets: configuration.secrets)
        let result: Result<HookAnswer, HookFailure>
        do {
            let response = try http.post(url, headers: headers, body: body)
            result = HookAnswer.read(hook, status: response.status, body: response.body)
        } catch {
            result = .failure(HookFailure(error.description))
        }
        switch result {
        case .success(let answer):
            switch answer {
            case .allow: metrics.count(hook, .allow)
            case .deny: metrics.count(hook, .deny)
            case .claims: metrics.count(hook, .claims)
            }
            return answer
        case .failure(let failure):
            metrics.count(hook, .failure)
            logger?.warning("hook failed", ["hook": hook.rawValue, "reason": failure.reason, "then": configuration.failure.rawValue])
            guard configuration.failure == .open else { throw .hookFailed }
            return nil
        }
    }

    /// Asks the decision hook of `subject` (before_sign_up for a new account, else before_sign_in).
    /// - Throws: `AuthError.hookDenied` with the hook's message; `hookFailed`.
    func decide(_ subject: HookSubject) throws(AuthError) {
        if case .deny(let message) = try ask(subject.decisionHook, about: subject) { throw .hookDenied(message: message) }
    }

    /// Asks token_claims about `subject`: its claims, none when it is off or failed open.
    /// - Throws: `AuthError.hookFailed`.
    func claims(_ subject: HookSubject) throws(AuthError) -> [String: JSONValue] {
        guard case .claims(let claims) = try ask(.tokenClaims, about: subject) else { return [:] }
        return claims
    }

    /// Asks what `pending` is missing and adds the answers to `answers`: the decision (and then the
    /// claims of the same sign-in, so one more try is enough), or the claims.
    /// - Throws: `AuthError.hookDenied`, `hookFailed`.
    func answer(_ pending: HookPending, into answers: inout HookAnswers) throws(AuthError) {
        if pending.decision {
            try decide(pending.subject)
            answers.decided = pending.subject
        }
        if isOn(.tokenClaims) { answers.claimed[HookAnswers.claimKey(pending.subject)] = try claims(pending.subject) }
    }
}

/// What the hooks answered for one sign-in so far, handed to each try of its write. A new
/// account is created with ``newUID``, the uid the hooks were asked about.
struct HookAnswers: Sendable {
    /// The uid a new account of this sign-in gets (the same on every try).
    let newUID: String
    let hooks: SignInHooks
    /// The subject the decision hook allowed (or failed open for).
    var decided: HookSubject?
    /// The claims token_claims gave, by ``claimKey(_:)``.
    var claimed: [String: [String: JSONValue]] = [:]

    /// Where an account is about to be created or given a session: passes when the decision hook
    /// of `subject` is off or allowed exactly this subject.
    /// - Throws: ``HookPending`` (the write rolls back, the hook is asked, the write runs again).
    func admit(_ subject: HookSubject) throws {
        guard hooks.isOn(subject.decisionHook), decided != subject else { return }
        throw HookPending(subject: subject, decision: true)
    }

    /// The extra claims of a token for `uid` signed in by `method`.
    /// - Throws: ``HookPending`` when token_claims is on and was not asked about them yet.
    func claims(uid: String, email: String?, method: String) throws -> [String: JSONValue] {
        guard hooks.isOn(.tokenClaims) else { return [:] }
        // An account this write creates has the uid the answers hold for it.
        let subject = HookSubject(uid: uid, email: email, method: method, isNewUser: uid == newUID)
        guard let claims = claimed[Self.claimKey(subject)] else { throw HookPending(subject: subject, decision: false) }
        return claims
    }

    /// Claims are asked per account, sign-in method and client.
    static func claimKey(_ subject: HookSubject) -> String { "\(subject.uid) \(subject.method) \(subject.clientID ?? "")" }
}

/// Thrown inside a write that needs a hook's answer it does not have: the write rolls back, and
/// ``FlowContext/writeAskingHooks(_:)`` asks and runs it again.
struct HookPending: Error, Sendable {
    let subject: HookSubject
    /// The decision hook is asked (else only token_claims).
    let decision: Bool
}

extension FlowContext {
    /// The most tries of one write that asks hooks: one asks the decision and the claims, the
    /// next uses them; two more when what the write found changed meanwhile.
    static let hookRounds = 4

    /// Runs `body` in a write transaction, as ``write(syncingLater:_:)`` does, with the hooks'
    /// answers: when `body` throws ``HookPending`` the transaction rolls back, the hook is asked
    /// outside any transaction (the database is never held while the operator's backend thinks),
    /// and `body` runs again with the answer.
    /// - Throws: what `body` throws, `AuthError.hookDenied`, `hookFailed` (also when the state
    ///   kept changing between the answers and the write).
    func writeAskingHooks<T: Sendable>(_ body: @escaping @Sendable (HookAnswers, any StoreWriter) throws -> T) throws(AuthError) -> T {
        var answers = HookAnswers(newUID: try Self.newID(), hooks: hooks)
        for _ in 0..<Self.hookRounds {
            let current = answers
            do {
                // As `write` does: the request's origin reaches the store's writer thread.
                return try store.write(Self.carryingOrigin { tx in try body(current, tx) })
            } catch let pending as HookPending {
                try hooks.answer(pending, into: &answers)
            } catch {
                throw Self.failure(error)
            }
        }
        logger?.warning("hook answers kept missing the sign-in", ["rounds": String(Self.hookRounds)])
        throw AuthError.hookFailed
    }
}
