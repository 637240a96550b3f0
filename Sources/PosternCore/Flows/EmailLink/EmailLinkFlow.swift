import Foundation
import PosternAPI
import PosternCrypto

/// Email-link sign-in: the request (link + 6-digit code by mail) and its completion by link,
/// oobCode or address + code, resolving the six cases of API.md's table. A password sign-up's
/// confirmation completes here too.
public final class EmailLinkFlow: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & ActionRequestWriter & SessionWriter & LimitWriter & OutboxWriter & WebhookWriter & PhoneWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ActionRequestReader & SessionReader & LimitReader & OutboxReader & WebhookReader & PhoneReader

    let context: FlowContext
    let ledger: ActionLedger
    let sessions: SessionFlow

    init(context: FlowContext, ledger: ActionLedger, sessions: SessionFlow) {
        self.context = context
        self.ledger = ledger
        self.sessions = sessions
    }

    /// Records a sign-in request and queues its mail. Answers the same for every address: the
    /// account is not looked up here. Returns the number the asking device shows when the request
    /// waits for an approval (`approvalDevice`), else nil.
    /// - Throws: `AuthError` for a malformed address, continue URL, challenge or ID token, an
    ///   approval without a challenge, and `tooManyAttempts` past the per-address limit.
    @discardableResult
    public func send(_ input: EmailLinkRequest) throws(AuthError) -> Int? {
        try AnswerSlot<Int?, AuthError>.waiting(missing: .internalError("the request was not recorded")) { done throws(AuthError) in
            try send(input, then: done)
        }
    }

    /// ``send(_:)`` handing the number (or the failure of its write) to `then`, after the commit
    /// (see ``FlowContext/write(_:then:)``). What is wrong with the input is thrown before anything
    /// is written, and `then` is not called.
    public func send(_ input: EmailLinkRequest, then: @escaping @Sendable (Result<Int?, AuthError>) -> Void) throws(AuthError) {
        let email = try context.parseEmail(input.email)
        let continueURL = try context.checkContinueURL(input.continueURL)
        try FlowContext.checkChallenge(input.codeChallenge)
        // bindBrowser: the browser's cookie is the link's verifier, so only its S256 is stored.
        var challenge = input.codeChallenge
        if let cookie = input.browserVerifier {
            guard input.codeChallenge == nil, input.approvalDevice == nil else {
                throw .invalidArgument("bindBrowser cannot be combined with codeChallenge or approval: the browser's cookie is the link's verifier.")
            }
            guard (22...64).contains(cookie.utf8.count), Base64URL.decode(cookie) != nil else {
                throw .invalidArgument("The browser's postern_browser cookie is malformed.")
            }
            challenge = FlowContext.s256Challenge(of: cookie)
        }
        let approval = try input.approvalDevice.map { device throws(AuthError) in
            guard input.codeChallenge != nil else {
                throw .invalidArgument("An approval needs codeChallenge: its verifier is the waiting device's secret.")
            }
            return try Self.newApproval(device: device)
        }
        let sessionUid = try input.idToken.map { token throws(AuthError) in try sessions.verifyIDToken(token).account.uid }
        let now = context.clock.unixSeconds()
        // The key that will derive the mail's 6-digit code is fixed now, so the content stage only reads.
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .signIn, email: email, uid: sessionUid,
            continueURL: continueURL, locale: input.locale.flatMap(FlowContext.cleanLocale), codeChallenge: challenge,
            createdAt: now, expiresAt: FlowContext.adding(context.config.ttlSignIn, to: now),
            sixDigitKeyID: context.keys.current.actionCodes.activeKeyID, approval: approval,
            browserBound: input.browserVerifier != nil)
        let number = approval?.number
        ledger.record(request, intent: .signIn(requestID: request.id), challenge: input.challengePass) { then($0.map { number }) }
    }

    /// Completes an email-link sign-in (or a password sign-up's confirmation).
    /// - Throws: `AuthError`: `INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, `EMAIL_MISMATCH`,
    ///   `INVALID_CODE_VERIFIER`, `MIGRATION_REQUIRED` (nothing consumed), `CREDENTIAL_ALREADY_IN_USE`,
    ///   `USER_DISABLED`, `TOO_MANY_ATTEMPTS_TRY_LATER`.
    public func complete(_ input: EmailLinkCompletion) throws(AuthError) -> LoginDescriptor {
        let presented = try sessions.presented(input.idToken)
        let typedEmail = try input.email.map { text throws(AuthError) in try context.parseEmail(text) }
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let request: ActionRequest
        let codeExpiry: Int64
        var cameByLink = true
        switch try ledger.codeInput(link: input.link, oobCode: input.oobCode, code: input.code) {
        case .link(let link):
            guard link.mode == .signIn else {
                throw .invalidCode("This is a \(link.mode.rawValue) link, not a sign-in link.")
            }
            (request, codeExpiry) = try signInRequest(oobCode: link.oobCode, ring: ring, now: now, input: input)
        case .oobCode(let text):
            (request, codeExpiry) = try signInRequest(oobCode: text, ring: ring, now: now, input: input)
        case .sixDigitCode(let digits):
            guard let typedEmail else { throw .invalidArgument("email is required with the 6-digit code.") }
            request = try ledger.requestForSixDigitCode(digits, email: typedEmail, ring: ring, now: now)
            codeExpiry = request.expiresAt
            cameByLink = false
        }
        // PKCE means PKCE: a link sent with a challenge completes only with its verifier (the
        // typed 6-digit code, which proves the mailbox, is the way in from another device).
        // A link bound to a browser (bindBrowser) takes that browser's cookie as its verifier.
        let verifierMatches = request.browserBound
            ? ((try? Self.checkVerifier(input.browserVerifier, request: request)) ?? false)
            : try Self.checkVerifier(input.codeVerifier, request: request)
        if cameByLink {
            if request.browserBound, !verifierMatches { throw ledger.refuse(.otherBrowser) }
            if request.codeChallenge != nil, !verifierMatches { throw .invalidCodeVerifier }
            if let typedEmail, typedEmail != request.email { throw .emailMismatch }
        }
        // The session given when the link was asked for binds it only when that device comes
        // back: the same session, or the verifier. Otherwise this is a plain sign-in to the
        // address's own account — never an upgrade of a stranger's anonymous account.
        let sameSession = request.uid != nil && presented?.account.uid == request.uid
        return try finish(
            request: request, codeExpiry: codeExpiry, presented: presented, askerReturned: verifierMatches || sameSession,
            allowMigration: input.allowMigration, method: request.purpose == .signUp ? "password" : "emailLink", now: now)
    }

    /// The verified request of a sign-in code. A used one presented again by the browser or
    /// device that completed it (its cookie or verifier) says so: `LINK_USED` with `signedInHere`.
    private func signInRequest(
        oobCode: String, ring: KeyRing, now: Int64, input: EmailLinkCompletion
    ) throws(AuthError) -> (ActionRequest, Int64) {
        do {
            return try context.read { (tx: Reads) in
                let (code, request) = try self.ledger.verifiedRequest(oobCode, expecting: .signIn, ring: ring, now: now, tx: tx)
                return (request, code.expiresAt)
            }
        } catch where error.code == APIErrorCode.linkUsed.rawValue {
            let verifier = input.codeVerifier ?? input.browserVerifier
            guard let check = try? context.read({ (tx: Reads) in try self.ledger.browserCheck(oobCode, verifier: verifier, tx: tx) }),
                check.signedInHere
            else { throw error }
            throw .linkUsed(signedInHere: true)
        }
    }

    /// True when `verifier` answers the request's PKCE challenge; false when either is absent.
    /// - Throws: `invalidCodeVerifier` for a verifier that does not match.
    static func checkVerifier(_ verifier: String?, request: ActionRequest) throws(AuthError) -> Bool {
        guard let challenge = request.codeChallenge, let verifier else { return false }
        guard FlowContext.verifier(verifier, answers: challenge) else { throw .invalidCodeVerifier }
        return true
    }

    /// The shared end of every sign-in by link: resolves the six cases in one transaction,
    /// consumes the request's code (except when refusing), and issues the session.
    ///
    /// `askerReturned`: the device that asked for the link is the one completing it (same session
    /// or PKCE verifier). Only then does the request's own session (a sign-up's anonymous account)
    /// count, only then may the presented session's account change (``SignInResolution/changesPresentedAccount``:
    /// else `LINK_OTHER_SESSION`, nothing consumed), and only then does a password chosen at
    /// sign-up apply. Linking an address to a normal account also asks for a recent sign-in, as
    /// `POST /v1/me/email` does (else `REQUIRES_RECENT_LOGIN`, nothing consumed): an old stolen
    /// session must not move the account to its thief's address.
    ///
    /// `approved`: the waiting device of an approval takes the session; the request must still
    /// be approved inside the transaction.
    func finish(
        request: ActionRequest, codeExpiry: Int64, presented: PresentedSession?, askerReturned: Bool, allowMigration: Bool?,
        method: String, now: Int64, approved: Bool = false
    ) throws(AuthError) -> LoginDescriptor {
        let issue = try sessions.issuer()
        let ledger = self.ledger
        let ttlRecoverEmail = context.config.ttlRecoverEmail
        let signUp = context.config.signUp
        let events = context.events
        return try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> LoginDescriptor in
            // Re-read inside the transaction: the state may have moved since the checks above.
            guard let current = try tx.actionRequest(id: request.id), ledger.life(current).phase(now: now) != .used else {
                throw AuthError.code(.alreadyUsed)
            }
            if approved, !ledger.life(current).isApproved(now: now) { throw AuthError.code(.stateChanged) }
            var session = try presented.flatMap { try tx.account(uid: $0.account.uid) }
            if presented == nil, askerReturned, let uid = current.uid {
                // The session that asked for the link, proved by the verifier (a sign-up upgrading
                // its anonymous account on the device that signed up).
                session = try tx.account(uid: uid).flatMap { $0.isAnonymous ? $0 : nil }
            }
            let holder = try tx.account(address: current.email)
            let resolution = SignInResolution.resolve(presented: session, holder: holder, allowMigration: allowMigration)
            if presented != nil, !askerReturned, resolution.changesPresentedAccount { throw AuthError.linkOtherSession }
            var migration: LoginDescriptor.Migration?
            var account: Account
            switch resolution {
            case .migrationRequired(let anonymousUid):
                throw AuthError.migrationRequired(anonymousUid: anonymousUid)
            case .credentialInUse:
                throw AuthError.credentialAlreadyInUse
            case .create:
                // Asked again now: a link minted while sign-ups were open creates nothing once they closed.
                try signUp.admit(current.email, byInvitation: current.purpose == .invitation, tx: tx, now: now)
                account = Account(uid: answers.newUID, email: current.email, createdAt: now)
                try tx.insertAccount(account)
                try events.record(.userCreated(uid: account.uid, email: current.email), tx: tx, now: now)
            case .signIn(let uid), .reauthenticate(let uid):
                guard let found = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
                account = found
            case .upgradeAnonymous(let uid):
                guard var found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                try signUp.admit(current.email, tx: tx, now: now)
                found.email = current.email
                account = found
                try events.record(.userAnonymousUpgraded(uid: uid, email: current.email), tx: tx, now: now)
            case .link(let uid):
                guard presented?.signedInRecently == true else { throw AuthError.requiresRecentLogin }
                guard var found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                // An account without an address (made by phone) gaining its first one signs it up.
                if found.email == nil { try signUp.admit(current.email, tx: tx, now: now) }
                if let old = found.email, old != current.email {
                    try ActionLedger.queueRecovery(uid: uid, old: old, new: current.email, tx: tx, now: now, ttl: ttlRecoverEmail)
                }
                if found.email != current.email {
                    try events.record(.userEmailChanged(uid: uid, email: current.email), tx: tx, now: now)
                }
                found.email = current.email
                account = found
            case .migrate(let from, let to, let moveData):
                (account, migration) = try SignInResolution.migrate(from: from, to: to, moveData: moveData, tx: tx, events: events, now: now)
            }
            if account.disabled { throw AuthError.userDisabled }
            try answers.admit(HookSubject(uid: account.uid, email: current.email.address, method: method, isNewUser: resolution.isNewUser))
            guard try ledger.consume(current, expiresAt: max(codeExpiry, current.expiresAt), now: now, tx: tx) else {
                throw AuthError.code(.alreadyUsed)
            }
            // A mailed code came back, typed or by its link: the mailbox receives mail again, so a
            // bounce or a rejection of it is lifted. A complaint stays (the recipient asked for no mail).
            if let suppressed = try tx.suppression(of: current.email), suppressed.reason.liftedBySignIn {
                _ = try tx.unsuppress(current.email)
            }
            // The link proved the mailbox: a password from before that proof is nobody's to keep.
            let droppedPassword = try SessionFlow.endUnprovedPassword(of: &account, tx: tx, events: events, now: now)
            if !account.emailVerified, case .signIn = resolution {
                try events.record(.userEmailVerified(uid: account.uid), tx: tx, now: now)
            } else if !account.emailVerified, case .reauthenticate = resolution {
                try events.record(.userEmailVerified(uid: account.uid), tx: tx, now: now)
            }
            account.emailVerified = true
            account.providers.insert(.emailLink)
            // A password chosen at sign-up applies only on the device that chose it: otherwise
            // whoever asked could pick the password of an account the address's owner creates.
            var needsPassword = droppedPassword
            if current.purpose == .signUp, resolution.isNewUser, let hash = current.passwordHash {
                if askerReturned {
                    account.passwordHash = hash
                    account.providers.insert(.password)
                } else {
                    needsPassword = account.passwordHash == nil
                }
            }
            try ledger.clearGuessBudgets(of: current.email, tx: tx)
            account.locale = account.locale ?? current.locale
            account.lastSignInAt = now
            try tx.updateAccount(account)
            try events.record(.userSignedIn(uid: account.uid, method: method), tx: tx, now: now)
            let issued = try issue(account, method, now, nil, tx, answers)
            return LoginDescriptor(
                uid: account.uid, email: account.email?.address, isNewUser: resolution.isNewUser, session: issued,
                migration: migration, needsPassword: needsPassword)
        }
    }
}
