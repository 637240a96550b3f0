import Foundation
import PosternCrypto

/// Sign-in by phone (`--phone-sign-in`, issue 17 point 4): an SMS code gives a session through
/// the email link's six cases (``SignInResolution``), where the identity is "the account that
/// holds the number verified" (`phone_numbers`).
///
/// The request is stored by the number's keyed hash (one per number: a newer code supersedes the
/// older) with the code only as a keyed hash bound to the request id; the number itself is in the
/// SMS outbox, sealed, until the message is finished. Sending never looks up who holds the number:
/// the answer is the same for every number, past the toll-fraud gate (``SMSAdmission``).
public final class PhoneSignInFlow: Sendable {
    /// The persisters this flow's transactions use: those of claiming a number (``PhoneClaiming``),
    /// whose steps its transactions run. Its closures are typed with these, so the compiler holds
    /// the flow to them.
    typealias Writes = PhoneClaiming.Writes
    /// What this flow's reads use.
    typealias Reads = PhoneClaiming.Reads

    let context: FlowContext
    let sessions: SessionFlow
    let settlement: PhoneSettlement
    let budget: PhoneGuessBudget

    init(context: FlowContext, sessions: SessionFlow, settlement: PhoneSettlement) {
        self.context = context
        self.sessions = sessions
        self.settlement = settlement
        budget = PhoneGuessBudget(context: context)
    }

    /// The sign-in method of the sessions a phone code gives (a number that moves to another
    /// account ends them: ``PhoneSettlement``).
    static let method = "phone"

    /// The request's 6-digit code: derived from its id under the phone key (as a claim's is, under
    /// another label), so the store keeps only its keyed hash and the composer derives it again.
    static func code(requestID: String, ring: KeyRing) -> String {
        PhoneKeys.sixDigits(ring.phoneNumbers.authenticate(Array("postern-phone-sign-in-code|\(requestID)".utf8)))
    }

    /// The keyed hash of `code` as the code of request `requestID`.
    static func codeHash(requestID: String, code: String, ring: KeyRing) -> [UInt8] {
        ring.phoneNumbers.authenticate(Array("postern-phone-sign-in-code-hash|\(requestID)|\(code)".utf8))
    }

    private func checkEnabled() throws(AuthError) {
        guard context.config.phoneSignIn else { throw .phoneSignInDisabled }
    }

    /// Queues a sign-in code to `phoneNumber`. The same answer for every number (nothing is looked
    /// up): past the SMS caps, 429 with Retry-After alike for all; within the number's own
    /// cool-off or past its hourly cap, the answer of a send, and nothing sent.
    /// - Throws: `phoneSignInDisabled`, `invalidPhoneNumber`, `invalidIDToken` for a bad token,
    ///   `smsCountryNotAllowed`, `tooManyAttempts`, `challengeRequired` (``ChallengeGate``, before
    ///   the SMS caps: a request that must solve first spends none of them).
    public func send(
        phoneNumber: String, locale: String?, idToken: String?, clientIP: String?, challengePass: ChallengePass = .none
    ) throws(AuthError) {
        try checkEnabled()
        let number = try context.parsePhoneNumber(phoneNumber)
        let caller = SMSAdmission.Caller.of(try idToken.map { token throws(AuthError) in try sessions.verifyIDToken(token).account })
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let id = try FlowContext.newRequestID(at: context.clock.now())
        let request = PhoneSignInCode(
            requestID: id, numberHash: PhoneKeys.numberHash(number, ring: ring), countryCode: number.countryCallingCode,
            codeHash: Self.codeHash(requestID: id, code: Self.code(requestID: id, ring: ring), ring: ring), createdAt: now,
            expiresAt: FlowContext.adding(context.config.phoneCodeLifetime, to: now), locale: locale.flatMap(FlowContext.cleanLocale))
        let admission = context.smsAdmission
        let gate = context.challenges
        try context.write { (tx: Writes) in
            try gate.admit(challengePass, domain: nil, now: now, tx: tx)
            // Silenced (the number's cool-off or hourly cap): the same answer, and nothing
            // recorded — a new request would supersede the code the number's owner has.
            guard try admission.admit(number, clientIP: clientIP, caller: caller, now: now, tx: tx) == .send else { return }
            try tx.putPhoneSignIn(request)
            _ = try tx.enqueueSMS(.phoneSignIn(requestID: id), recipient: number, now: now, giveUpAt: request.expiresAt)
        }
    }

    /// What one try came to, when it did not sign in (the count of a wrong code must land).
    private enum Outcome: Sendable {
        case signedIn(LoginDescriptor)
        case refused(String)
        case limited(Int64)
    }

    /// Signs in with the SMS code: the six cases of the email link, for the account that holds
    /// the number verified (none: a new account, or the anonymous session's, gets it).
    /// - Throws: `phoneSignInDisabled`, `invalidPhoneNumber`, `invalidPhoneCode` (wrong, expired,
    ///   used, superseded, or past 5 tries: one answer), `tooManyAttempts` while the number's
    ///   guessing budget is locked (every code refused, the right one included, none counted:
    ///   ``PhoneGuessBudget/bucket(numberHash:ring:)``), `invalidIDToken`, `MIGRATION_REQUIRED`
    ///   (nothing consumed), `CREDENTIAL_ALREADY_IN_USE`, `USER_DISABLED`, `REQUIRES_RECENT_LOGIN`
    ///   when a signed-in (not anonymous) session would gain a free number without a sign-in in
    ///   the last 5 minutes (nothing consumed).
    public func complete(phoneNumber: String, code: String, idToken: String?, allowMigration: Bool?) throws(AuthError) -> LoginDescriptor {
        try checkEnabled()
        let number = try context.parsePhoneNumber(phoneNumber)
        try PhoneKeys.checkCodeShape(code)
        let presented = try sessions.presented(idToken)
        let now = context.clock.unixSeconds()
        let ring = context.keys.current
        let numberHash = PhoneKeys.numberHash(number, ring: ring)
        let maximumTries = context.config.maximumWrongCodes
        let issue = try sessions.issuer()
        let events = context.events
        let budget = budget
        let settlement = settlement
        let guessBucket = PhoneGuessBudget.bucket(numberHash: numberHash, ring: ring)
        let signUp = context.config.signUp
        let outcome = try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> Outcome in
            // The number's budget first, which no new code resets: while it is locked every code
            // is refused unchecked, the right one included, and nothing is counted.
            if let wait = try budget.lock(bucket: guessBucket, tx: tx, now: now) { return .limited(wait) }
            // The try is counted first, in one statement: concurrent guesses never pass the limit.
            guard let request = try tx.takePhoneSignInTry(numberHash: numberHash, maximumTries: maximumTries) else {
                return .refused("phone-sign-in-none")
            }
            guard now < request.expiresAt else { return .refused("phone-sign-in-expired") }
            let expected = Self.codeHash(requestID: request.requestID, code: code, ring: ring)
            guard ConstantTime.equals(expected, request.codeHash) else {
                // A wrong guess at a live code counts against the number, whichever code it was
                // (no code open, or a used one: nothing to guess, and a double submit of the
                // right code must not lock its owner out).
                try budget.countWrongGuess(bucket: guessBucket, tx: tx, now: now)
                return .refused("phone-sign-in-wrong")
            }
            // The right code: from here every refusal rolls back (the try is not counted, nothing consumed).
            let session = try presented.flatMap { try tx.account(uid: $0.account.uid) }
            let holding = try settlement.holderSettlingTransfers(number: number, tx: tx, now: now)
            let holder = try holding.flatMap { try tx.account(uid: $0.uid) }
            let resolution = SignInResolution.resolve(presented: session, holder: holder, allowMigration: allowMigration)
            var migration: LoginDescriptor.Migration?
            var account: Account
            var gainsNumber = false
            switch resolution {
            case .migrationRequired(let anonymousUid):
                throw AuthError.migrationRequired(anonymousUid: anonymousUid)
            case .credentialInUse:
                throw AuthError.phoneInUse
            case .create:
                // The code proved the number, so the refusal tells its holder only what is theirs.
                try signUp.admitWithoutAddress(anonymous: false)
                account = Account(uid: answers.newUID, createdAt: now, providers: [.phone])
                try tx.insertAccount(account)
                try events.record(.userCreated(uid: account.uid, email: nil, byPhone: true), tx: tx, now: now)
                gainsNumber = true
            case .signIn(let uid), .reauthenticate(let uid):
                guard let found = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
                account = found
            case .upgradeAnonymous(let uid):
                guard let found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                // Upgraded, the anonymous account is kept for good: checked as a sign-up by phone.
                try signUp.admitWithoutAddress(anonymous: false)
                account = found
                try events.record(.userAnonymousUpgraded(uid: uid, email: nil), tx: tx, now: now)
                gainsNumber = true
            case .link(let uid):
                // Adding a number to a signed-in account asks for a recent sign-in, as `POST /v1/me/phones`
                // does: an old stolen session must not plant its thief's number on the account.
                guard presented?.signedInRecently == true else { throw AuthError.requiresRecentLogin }
                guard let found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                account = found
                gainsNumber = true
            case .migrate(let from, let to, let moveData):
                (account, migration) = try SignInResolution.migrate(from: from, to: to, moveData: moveData, tx: tx, events: events, now: now)
            }
            if account.disabled { throw AuthError.userDisabled }
            try answers.admit(HookSubject(
                uid: account.uid, email: account.email?.address, phoneNumber: number.e164, method: Self.method, isNewUser: resolution.isNewUser))
            guard try tx.deletePhoneSignIn(requestID: request.requestID) else { return .refused("phone-sign-in-used") }
            // The code proved the number: its budget starts afresh.
            try tx.setGuessRecord(bucket: guessBucket, nil)
            if gainsNumber {
                // The code proved the number and the session (or the new account) is its owner:
                // both parties at once, written under the number's unique key.
                let claimID = try FlowContext.newID()
                try tx.insertPhoneClaim(PhoneClaim(
                    id: claimID, uid: account.uid, numberHash: numberHash, countryCode: number.countryCallingCode,
                    codeHash: request.codeHash, createdAt: now, codeExpiresAt: now, expiresAt: now, ownerApprovedAt: now,
                    holderProvedAt: now, verifiedAt: now, locale: request.locale))
                guard try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: numberHash, uid: account.uid, claimID: claimID, verifiedAt: now)) else {
                    // Another sign-in or claim took the number since it was read: nothing lands, try again.
                    throw AuthError.code(.stateChanged)
                }
                try events.record(.phoneVerified(uid: account.uid, claimID: claimID), tx: tx, now: now)
            }
            account.providers.insert(.phone)
            account.locale = account.locale ?? request.locale
            account.lastSignInAt = now
            try tx.updateAccount(account)
            try events.record(.userSignedIn(uid: account.uid, method: Self.method), tx: tx, now: now)
            let issued = try issue(account, Self.method, now, nil, tx, answers)
            return .signedIn(LoginDescriptor(
                uid: account.uid, email: account.email?.address, isNewUser: resolution.isNewUser, session: issued, migration: migration))
        }
        switch outcome {
        case .signedIn(let login):
            return login
        case .refused(let reason):
            context.metrics.refused(reason)
            throw AuthError.invalidPhoneCode
        case .limited(let wait):
            throw budget.locked(wait)
        }
    }

    /// What a queued sign-in SMS says now: the request's code while it is the number's newest,
    /// unused and unexpired (and the message goes to its number), else nil.
    func composeSMS(requestID: String, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let maximumTries = context.config.maximumWrongCodes
        return try context.read { (tx: Reads) in
            guard let request = try tx.phoneSignIn(requestID: requestID), now < request.expiresAt, request.tries < maximumTries,
                ConstantTime.equals(PhoneKeys.numberHash(recipient, ring: ring), request.numberHash)
            else { return nil }
            return SMSContent(kind: .signInCode, code: Self.code(requestID: requestID, ring: ring), localePreferences: [request.locale])
        }
    }
}
