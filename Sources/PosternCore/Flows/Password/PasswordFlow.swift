import PosternCrypto

/// Passwords: verify-first sign-up, sign-in within the address's guess budget, reset requests,
/// and setting a password on a signed-in account.
public final class PasswordFlow: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & SessionWriter & LimitWriter & OutboxWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & SessionReader & LimitReader & OutboxReader & WebhookReader

    let context: FlowContext
    let ledger: ActionLedger
    let sessions: SessionFlow
    /// A hash of a random password with the hasher's parameters: unknown addresses are checked
    /// against it so that every failed password sign-in costs the same time.
    let dummyPasswordHash: String
    /// Pads every check to the slowest scheme's typical time (imported hashes cost otherwise).
    let pacer: PasswordCheckPacer

    /// `pacer`: by default one bounded by the service's own hash (`context.hasher`).
    /// - Throws: `AuthError.internalError` when hashing fails.
    init(context: FlowContext, ledger: ActionLedger, sessions: SessionFlow, pacer: PasswordCheckPacer? = nil) throws(AuthError) {
        self.context = context
        self.ledger = ledger
        self.sessions = sessions
        self.pacer = pacer ?? PasswordCheckPacer(bound: PasswordCostBound(own: context.hasher))
        do {
            dummyPasswordHash = try context.hasher.hash(Base64URL.encode(try SecureRandom.bytes(24)))
        } catch {
            throw .internalError("cannot set up the flows: \(error)")
        }
    }

    /// Verify-first sign-up: checks the password policy, hashes the password, records the request
    /// and queues the mail. The answer is the same for every address; the account is created when
    /// the mailed link is completed (an address that has an account gets "you already have one").
    ///
    /// The password applies only if the confirmation comes back from this device: with the
    /// verifier of `codeChallenge`, or with the same `idToken`. Confirmed anywhere else, the
    /// account is created without it (`needsPassword`), so nobody can choose the password of an
    /// account that the address's owner creates by clicking.
    /// - Throws: `AuthError.weakPassword`, `invalidEmail`, `tooManyAttempts`.
    public func signUp(
        email: String, password: String, idToken: String?, continueURL: String?, locale: String?, codeChallenge: String? = nil,
        challengePass: ChallengePass = .none
    ) throws(AuthError) {
        let address = try context.parseEmail(email)
        try PasswordPolicy.check(password, email: address)
        let continueURL = try context.checkContinueURL(continueURL)
        try FlowContext.checkChallenge(codeChallenge)
        let sessionUid = try idToken.map { token throws(AuthError) in try sessions.verifyIDToken(token).account.uid }
        let hash = try context.hashPassword(password)
        let now = context.clock.unixSeconds()
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .signUp, email: address, uid: sessionUid,
            passwordHash: hash, continueURL: continueURL, locale: locale.flatMap(FlowContext.cleanLocale),
            codeChallenge: codeChallenge, createdAt: now, expiresAt: FlowContext.adding(context.config.ttlSignIn, to: now))
        try ledger.record(request, intent: .signUp(requestID: request.id), challenge: challengePass)
    }

    /// Password sign-in. Every failure — unknown address, no password, wrong password — is
    /// `INVALID_LOGIN_CREDENTIALS` after the same scrypt work; `USER_DISABLED` only once the
    /// password proved right. Resolves the six cases like an email link.
    ///
    /// Each attempt first takes a guess from the address's budget, in the same way for every
    /// address (so a lock reveals nothing); while the address is over budget every password is
    /// refused with `TOO_MANY_ATTEMPTS_TRY_LATER`, the right one included. The guess is taken in
    /// the same write as the check, so concurrent attempts cannot share one check.
    /// - Throws: `AuthError`.
    public func signIn(email: String, password: String, idToken: String?, allowMigration: Bool?) throws(AuthError) -> LoginDescriptor {
        let presented = try idToken.map { token throws(AuthError) in try sessions.verifyIDToken(token).account }
        // A malformed address is refused like an unknown one, after the same work.
        let address = try? EmailAddress.parse(email)
        let now = context.clock.unixSeconds()
        let budget = context.config.guessBudget
        let bucket = address.map { ledger.guessBucket(.password, $0) }
        if let bucket {
            let wait = try context.write { (tx: Writes) -> Int64? in
                let record = try tx.guessRecord(bucket: bucket)
                if let wait = budget.retryAfter(record, now: now) { return wait }
                try tx.setGuessRecord(bucket: bucket, budget.failing(record, now: now))
                return nil
            }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
        }
        // Only the uid and the hash before the check: a known address must not cost more than an
        // unknown one (measured by bench/enumeration).
        let holder = try address.flatMap { address throws(AuthError) in try context.read { (tx: Reads) in try tx.passwordCredential(address: address) } }
        let stored = holder?.passwordHash ?? dummyPasswordHash
        // The string names its scheme: Postern's scrypt, or an imported Firebase scrypt or bcrypt
        // hash, which the rehash below replaces with Postern's.
        let passwords = context.keys.current.passwords
        // Once per process, before the first check: the time of each imported scheme in the store.
        let wrong = dummyPasswordHash
        pacer.calibrate(store: context.store) { sample in _ = try? passwords.verify(wrong, against: sample) }
        // A hash costing more than the service's own (stored before imports were bounded) is
        // checked, but its time is its own: it must not slow every address's sign-in.
        let withinBound = pacer.bound.allows(stored)
        let matches = pacer.paced(scheme: PasswordScheme(of: stored), withinBound: withinBound) {
            (try? passwords.verify(password, against: stored)) ?? false
        }
        guard let holder, let address, holder.passwordHash != nil, matches else { throw .invalidLoginCredentials }
        let issue = try sessions.issuer()
        let rehash = context.hasher.needsRehash(stored) || !withinBound ? try context.hashPassword(password) : nil
        let events = context.events
        return try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> LoginDescriptor in
            guard let current = try tx.account(address: address), current.uid == holder.uid,
                current.passwordHash == holder.passwordHash
            else { throw AuthError.invalidLoginCredentials }
            guard !current.disabled else { throw AuthError.userDisabled }
            try answers.admit(HookSubject(uid: current.uid, email: current.email?.address, method: "password", isNewUser: false))
            var session = try presented.flatMap { try tx.account(uid: $0.uid) }
            if session?.uid == current.uid { session = current }
            var account = current
            var migration: LoginDescriptor.Migration?
            switch SignInResolution.resolve(presented: session, holder: current, allowMigration: allowMigration) {
            case .migrationRequired(let anonymousUid): throw AuthError.migrationRequired(anonymousUid: anonymousUid)
            case .credentialInUse: throw AuthError.credentialAlreadyInUse
            case .migrate(let from, let to, let moveData):
                try tx.deleteAccount(uid: from)
                migration = .init(fromUid: from, toUid: to, allowMigration: moveData)
                try events.record(.userMigrated(fromUid: from, toUid: to), tx: tx, now: now)
            default: break
            }
            // The right password gives back the guess it took, and the ones before.
            if let bucket { try tx.setGuessRecord(bucket: bucket, nil) }
            if let rehash { account.passwordHash = rehash }
            account.lastSignInAt = now
            try tx.updateAccount(account)
            try events.record(.userSignedIn(uid: account.uid, method: "password"), tx: tx, now: now)
            let issued = try issue(account, "password", now, nil, tx, answers)
            return LoginDescriptor(
                uid: account.uid, email: account.email?.address, isNewUser: false, session: issued, migration: migration)
        }
    }

    /// Asks for a reset link: records the request and queues the mail; 202 for every address.
    /// - Throws: `AuthError.invalidEmail`, `invalidContinueURL`, `tooManyAttempts`.
    public func requestReset(email: String, continueURL: String?, locale: String?, challengePass: ChallengePass = .none) throws(AuthError) {
        try AnswerSlot<Void, AuthError>.waiting(missing: .internalError("the request was not recorded")) { done throws(AuthError) in
            try requestReset(email: email, continueURL: continueURL, locale: locale, challengePass: challengePass, then: done)
        }
    }

    /// ``requestReset(email:continueURL:locale:challengePass:)`` handing its outcome to `then` after the commit
    /// (see ``FlowContext/write(_:then:)``). What is wrong with the input is thrown before anything
    /// is written, and `then` is not called.
    public func requestReset(
        email: String, continueURL: String?, locale: String?, challengePass: ChallengePass = .none,
        then: @escaping @Sendable (Result<Void, AuthError>) -> Void
    ) throws(AuthError) {
        let address = try context.parseEmail(email)
        let continueURL = try context.checkContinueURL(continueURL)
        let now = context.clock.unixSeconds()
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .resetPassword, email: address,
            continueURL: continueURL, locale: locale.flatMap(FlowContext.cleanLocale), createdAt: now,
            expiresAt: FlowContext.adding(context.config.ttlResetPassword, to: now))
        ledger.record(request, intent: .resetPassword(requestID: request.id), challenge: challengePass, then: then)
    }

    /// Sets or changes the password of a recently signed-in account; revokes its other sessions,
    /// mails a notice, and returns a fresh session.
    /// - Throws: `AuthError.requiresRecentLogin`, `weakPassword`, `invalidIDToken`.
    public func setPassword(idToken: String, password: String) throws(AuthError) -> Session {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        // A password signs in with an address: an account without one (anonymous, or made by a
        // phone sign-in) gets one first.
        guard account.email != nil else {
            throw .anonymousAccount("An account without an address needs one first: use password sign-up with its idToken.")
        }
        try PasswordPolicy.check(password, email: account.email)
        let hash = try context.hashPassword(password)
        let now = context.clock.unixSeconds()
        let issue = try sessions.issuer()
        let events = context.events
        let session = try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> Session in
            guard var current = try tx.account(uid: account.uid) else { throw AuthError.invalidIDToken }
            current.passwordHash = hash
            current.providers.insert(.password)
            try SessionFlow.revokeAll(of: &current, tx: tx)
            try tx.updateAccount(current)
            if let email = current.email {
                try ActionLedger.queueNotice(.passwordChanged(uid: current.uid), to: email, tx: tx, now: now)
            }
            try events.record(.userPasswordChanged(uid: current.uid), tx: tx, now: now)
            try events.record(.sessionRevoked(uid: current.uid, reason: "passwordChanged"), tx: tx, now: now)
            return try issue(current, "password", now, nil, tx, answers)
        }
        return session
    }
}
