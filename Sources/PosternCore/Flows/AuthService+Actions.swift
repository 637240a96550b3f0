import Foundation

extension AuthService {
    /// Says what a link is and whether it still works, consuming nothing (GET/HEAD of the hosted
    /// page and `/v1/actions/inspect` use this, so mail scanners cannot burn links).
    /// - Throws: `AuthError` (`INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, or an unusable link).
    public func inspectAction(link: String?, oobCode: String?) throws(AuthError) -> ActionInfo {
        let text = try oobCodeText(link: link, oobCode: oobCode)
        let ring = keys.current
        let now = clock.unixSeconds()
        return try read { tx in
            let (code, request) = try self.verifiedRequest(text, expecting: nil, ring: ring, now: now, tx: tx)
            // A PKCE link says nothing of its address to whoever holds it without the verifier.
            return ActionInfo(
                mode: code.action, email: request.codeChallenge == nil ? request.email.address : nil,
                expiresAt: code.expiresAt, continueURL: request.continueURL)
        }
    }

    /// Applies a reset, verification, address change or recovery link.
    /// - Throws: `AuthError`; `invalidArgument` when a reset has no `newPassword`, `weakPassword`,
    ///   `emailExists` when the new address was taken meanwhile.
    public func applyAction(link: String?, oobCode: String?, newPassword: String?) throws(AuthError) -> AppliedAction {
        let text = try oobCodeText(link: link, oobCode: oobCode)
        let info = try inspectAction(link: nil, oobCode: text)
        var hash: String?
        switch info.mode {
        case .signIn:
            throw .invalidCode("This is a sign-in link: complete it with /v1/email-link/complete.")
        case .resetPassword:
            guard let newPassword else { throw .invalidArgument("newPassword is required to apply a reset link.") }
            try PasswordPolicy.check(newPassword, email: info.email.flatMap { try? EmailAddress.parse($0) })
            hash = try hashPassword(newPassword)
        default:
            break
        }
        let ring = keys.current
        let now = clock.unixSeconds()
        let config = self.config
        let applied = try write { [hash] tx -> AppliedAction in
            let (code, request) = try self.verifiedRequest(text, expecting: nil, ring: ring, now: now, tx: tx)
            guard let uid = request.uid, var account = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
            guard try self.consume(request, expiresAt: code.expiresAt, now: now, tx: tx) else {
                throw AuthError.code(.alreadyUsed)
            }
            switch request.purpose {
            case .resetPassword:
                account.passwordHash = hash
                account.providers.insert(.password)
                account.emailVerified = true
                try Self.revokeAllSessions(of: &account, tx: tx, now: now)
                try tx.updateAccount(account)
                // A reset ends every open sign-in link and code of the address too: whoever made
                // the owner reset may hold one.
                try Self.endOpenSignIns(of: request.email, tx: tx, now: now)
                try self.clearGuessBudgets(of: request.email, tx: tx)
                try Self.queueNotice(.passwordChanged(uid: uid), to: request.email, tx: tx, now: now)
            case .verifyEmail:
                account.emailVerified = true
                try tx.updateAccount(account)
            case .changeEmail:
                guard let old = request.otherEmail else { throw AuthError.code(.stateChanged) }
                if let holder = try tx.account(address: request.email), holder.uid != uid { throw AuthError.emailExists }
                account.email = request.email
                account.emailVerified = true
                try tx.updateAccount(account)
                try Self.queueRecovery(uid: uid, old: old, new: request.email, tx: tx, now: now, ttl: config.ttlRecoverEmail)
            case .recoverEmail:
                if let holder = try tx.account(address: request.email), holder.uid != uid { throw AuthError.emailExists }
                account.email = request.email
                account.emailVerified = true
                try Self.revokeAllSessions(of: &account, tx: tx, now: now)
                try tx.updateAccount(account)
            case .signIn, .signUp:
                throw AuthError.code(.wrongAction)
            }
            return AppliedAction(mode: code.action, email: request.email.address)
        }
        mailQueued()
        return applied
    }

    /// Marks every open sign-in and sign-up request of `email` used, in the caller's transaction.
    static func endOpenSignIns(of email: EmailAddress, tx: any StoreWriter, now: Int64) throws {
        for purpose in [ActionRequest.Purpose.signIn, .signUp] {
            // The store answers a page at a time (the newest 20); each page is marked, so the loop ends.
            var page = try tx.openActionRequests(purpose: purpose, address: email, now: now)
            while !page.isEmpty {
                for var open in page {
                    open.consumedAt = now
                    try tx.updateActionRequest(open)
                }
                page = try tx.openActionRequests(purpose: purpose, address: email, now: now)
            }
        }
    }

    /// Asks for a verification link to the signed-in account's address.
    /// - Throws: `AuthError.invalidIDToken`, `invalidArgument` for an anonymous account, `tooManyAttempts`.
    public func requestEmailVerification(idToken: String, continueURL: String?) throws(AuthError) {
        let (account, _) = try verifyIDToken(idToken)
        guard let email = account.email else { throw .invalidArgument("An anonymous account has no address to verify.") }
        let continueURL = try checkContinueURL(continueURL)
        let now = clock.unixSeconds()
        let request = ActionRequest(
            id: try Self.newRequestID(at: clock.now()), purpose: .verifyEmail, email: email, uid: account.uid, continueURL: continueURL,
            locale: account.locale, createdAt: now, expiresAt: now + config.ttlVerifyEmail)
        try recordRequest(request, intent: .verifyEmail(requestID: request.id))
    }

    /// Asks to move a recently signed-in account to `newEmail`: the new address gets a link; the
    /// address moves only when it is applied (both the holder and the owner agreed).
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidEmail`, `tooManyAttempts`.
    public func requestEmailChange(idToken: String, newEmail: String, continueURL: String?) throws(AuthError) {
        let (account, _) = try verifyRecentSignIn(idToken)
        let address = try parseEmail(newEmail)
        guard let old = account.email else {
            throw .invalidArgument("An anonymous account gets its first address by signing in with it.")
        }
        guard old != address else { throw .invalidArgument("newEmail is the account's address already.") }
        let continueURL = try checkContinueURL(continueURL)
        let now = clock.unixSeconds()
        let request = ActionRequest(
            id: try Self.newRequestID(at: clock.now()), purpose: .changeEmail, email: address, uid: account.uid, otherEmail: old,
            continueURL: continueURL, locale: account.locale, createdAt: now, expiresAt: now + config.ttlVerifyEmail)
        try recordRequest(request, intent: .changeEmail(requestID: request.id))
    }

    private func oobCodeText(link: String?, oobCode: String?) throws(AuthError) -> String {
        switch try codeInput(link: link, oobCode: oobCode, code: nil) {
        case .link(let parsed): return parsed.oobCode
        case .oobCode(let text): return text
        case .sixDigitCode: throw .invalidArgument("A 6-digit code signs in; it does not apply an action.")
        }
    }
}
