import Foundation

/// Links that act on an account's address or password: inspecting any link, applying a reset,
/// a verification, a change of address or its recovery, and asking for a verification or a change.
public final class AddressFlow: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & ActionRequestWriter & SessionWriter & LimitWriter & OutboxWriter & PhoneWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ActionRequestReader & SessionReader & LimitReader & OutboxReader & PhoneReader & WebhookReader

    let context: FlowContext
    let ledger: ActionLedger
    let sessions: SessionFlow

    init(context: FlowContext, ledger: ActionLedger, sessions: SessionFlow) {
        self.context = context
        self.ledger = ledger
        self.sessions = sessions
    }

    /// Says what a link is and whether it still works, consuming nothing (GET/HEAD of the hosted
    /// page and `/v1/actions/inspect` use this, so mail scanners cannot burn links).
    /// - Throws: `AuthError` (`INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, or an unusable link).
    public func inspect(link: String?, oobCode: String?) throws(AuthError) -> ActionInfo {
        let text = try oobCodeText(link: link, oobCode: oobCode)
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        return try context.read { (tx: Reads) in
            let (code, request) = try self.ledger.verifiedRequest(text, expecting: nil, ring: ring, now: now, tx: tx)
            // A PKCE link says nothing of its address to whoever holds it without the verifier.
            return ActionInfo(
                mode: code.action, email: request.codeChallenge == nil ? request.email.address : nil,
                expiresAt: code.expiresAt, continueURL: request.continueURL)
        }
    }

    /// Applies a reset, verification, address change or recovery link.
    /// - Throws: `AuthError`; `invalidArgument` when a reset has no `newPassword`, `weakPassword`,
    ///   `emailExists` when the new address was taken meanwhile.
    public func apply(link: String?, oobCode: String?, newPassword: String?) throws(AuthError) -> AppliedAction {
        let text = try oobCodeText(link: link, oobCode: oobCode)
        let info = try inspect(link: nil, oobCode: text)
        var hash: String?
        switch info.mode {
        case .signIn:
            throw .invalidCode("This is a sign-in link: complete it with /v1/email-link/complete.")
        case .resetPassword:
            guard let newPassword else { throw .invalidArgument("newPassword is required to apply a reset link.") }
            try PasswordPolicy.check(newPassword, email: info.email.flatMap { try? EmailAddress.parse($0) })
            hash = try context.hashPassword(newPassword)
        default:
            break
        }
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let ttlRecoverEmail = context.config.ttlRecoverEmail
        let ledger = self.ledger
        let events = context.events
        let applied = try context.write { [hash] (tx: Writes) -> AppliedAction in
            let (code, request) = try ledger.verifiedRequest(text, expecting: nil, ring: ring, now: now, tx: tx)
            guard let uid = request.uid, var account = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
            guard try ledger.consume(request, expiresAt: code.expiresAt, now: now, tx: tx) else {
                throw AuthError.code(.alreadyUsed)
            }
            switch request.purpose {
            case .resetPassword:
                // The numbers added under a password from before the address was proved go too.
                _ = try SessionFlow.endUnprovedPassword(of: &account, tx: tx, events: events, now: now)
                account.passwordHash = hash
                account.providers.insert(.password)
                account.emailVerified = true
                try SessionFlow.revokeAll(of: &account, tx: tx)
                try tx.updateAccount(account)
                // A reset ends every open sign-in link and code of the address too: whoever made
                // the owner reset may hold one. And it proves the mailbox.
                try ledger.endOpenSignIns(of: request.email, tx: tx, now: now)
                try ledger.clearGuessBudgets(of: request.email, tx: tx)
                try ActionLedger.queueNotice(.passwordChanged(uid: uid), to: request.email, tx: tx, now: now)
                try events.record(.userPasswordReset(uid: uid), tx: tx, now: now)
                try events.record(.sessionRevoked(uid: uid, reason: "passwordReset"), tx: tx, now: now)
            case .verifyEmail:
                let wasVerified = account.emailVerified
                // Its holder proved the address: a password chosen before that is dropped and
                // the sessions end (the one who asked for this link may be who chose it).
                _ = try SessionFlow.endUnprovedPassword(of: &account, tx: tx, events: events, now: now)
                account.emailVerified = true
                try tx.updateAccount(account)
                if !wasVerified { try events.record(.userEmailVerified(uid: uid), tx: tx, now: now) }
            case .changeEmail:
                guard let old = request.otherEmail else { throw AuthError.code(.stateChanged) }
                if let holder = try tx.account(address: request.email), holder.uid != uid { throw AuthError.emailExists }
                account.email = request.email
                account.emailVerified = true
                // Every session ends, as a recovery's does: an ID token still says the old
                // address for up to an hour, and the old address is free now for someone else
                // to sign up with: two sessions would claim it. (Firebase ends them too.)
                try SessionFlow.revokeAll(of: &account, tx: tx)
                try tx.updateAccount(account)
                try ActionLedger.queueRecovery(uid: uid, old: old, new: request.email, tx: tx, now: now, ttl: ttlRecoverEmail)
                try events.record(.userEmailChanged(uid: uid, email: request.email), tx: tx, now: now)
                try events.record(.sessionRevoked(uid: uid, reason: "emailChanged"), tx: tx, now: now)
            case .recoverEmail:
                if let holder = try tx.account(address: request.email), holder.uid != uid { throw AuthError.emailExists }
                account.email = request.email
                account.emailVerified = true
                try SessionFlow.revokeAll(of: &account, tx: tx)
                try tx.updateAccount(account)
                try events.record(.userEmailRecovered(uid: uid, email: request.email), tx: tx, now: now)
                try events.record(.sessionRevoked(uid: uid, reason: "emailRecovered"), tx: tx, now: now)
            case .signIn, .signUp, .invitation:
                throw AuthError.code(.wrongAction)
            }
            return AppliedAction(mode: code.action, email: request.email.address)
        }
        return applied
    }

    /// Asks for a verification link to the signed-in account's address.
    /// - Throws: `AuthError.invalidIDToken`, `invalidArgument` for an anonymous account, `tooManyAttempts`.
    public func requestVerification(idToken: String, continueURL: String?) throws(AuthError) {
        let (account, _) = try sessions.verifyIDToken(idToken)
        guard let email = account.email else { throw .anonymousAccount("An anonymous account has no address to verify.") }
        let continueURL = try context.checkContinueURL(continueURL)
        let now = context.clock.unixSeconds()
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .verifyEmail, email: email, uid: account.uid,
            continueURL: continueURL, locale: account.locale, createdAt: now,
            expiresAt: FlowContext.adding(context.config.ttlVerifyEmail, to: now))
        try ledger.record(request, intent: .verifyEmail(requestID: request.id), challenge: nil)
    }

    /// Asks to move a recently signed-in account to `newEmail`: the new address gets a link; the
    /// address moves only when it is applied (both the holder and the owner agreed).
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidEmail`, `tooManyAttempts`.
    public func requestChange(idToken: String, newEmail: String, continueURL: String?) throws(AuthError) {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let address = try context.parseEmail(newEmail)
        guard let old = account.email else {
            throw .anonymousAccount("An anonymous account gets its first address by signing in with it.")
        }
        guard old != address else { throw .invalidArgument("newEmail is the account's address already.") }
        let continueURL = try context.checkContinueURL(continueURL)
        let now = context.clock.unixSeconds()
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .changeEmail, email: address, uid: account.uid,
            otherEmail: old, continueURL: continueURL, locale: account.locale, createdAt: now,
            expiresAt: FlowContext.adding(context.config.ttlVerifyEmail, to: now))
        try ledger.record(request, intent: .changeEmail(requestID: request.id), challenge: nil)
    }

    private func oobCodeText(link: String?, oobCode: String?) throws(AuthError) -> String {
        switch try ledger.codeInput(link: link, oobCode: oobCode, code: nil) {
        case .link(let parsed): return parsed.oobCode
        case .oobCode(let text): return text
        case .sixDigitCode: throw .invalidArgument("A 6-digit code signs in; it does not apply an action.")
        }
    }
}
