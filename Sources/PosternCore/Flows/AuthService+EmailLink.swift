import Foundation
import PosternCrypto

/// What `POST /v1/email-link/send` takes.
public struct EmailLinkRequest: Sendable {
    public var email: String
    public var continueURL: String?
    public var locale: String?
    /// PKCE S256 challenge: base64url(SHA-256(codeVerifier)).
    public var codeChallenge: String?
    public var idToken: String?

    public init(
        email: String, continueURL: String? = nil, locale: String? = nil, codeChallenge: String? = nil,
        idToken: String? = nil
    ) {
        self.email = email
        self.continueURL = continueURL
        self.locale = locale
        self.codeChallenge = codeChallenge
        self.idToken = idToken
    }
}

/// What `POST /v1/email-link/complete` takes.
public struct EmailLinkCompletion: Sendable {
    /// Any pasted text holding the link.
    public var link: String?
    public var oobCode: String?
    /// The 6 digits from the mail; needs `email`.
    public var code: String?
    public var email: String?
    public var codeVerifier: String?
    public var idToken: String?
    public var allowMigration: Bool

    public init(
        link: String? = nil, oobCode: String? = nil, code: String? = nil, email: String? = nil,
        codeVerifier: String? = nil, idToken: String? = nil, allowMigration: Bool = false
    ) {
        self.link = link
        self.oobCode = oobCode
        self.code = code
        self.email = email
        self.codeVerifier = codeVerifier
        self.idToken = idToken
        self.allowMigration = allowMigration
    }
}

extension AuthService {
    /// Records a sign-in request and queues its mail. Answers the same for every address: the
    /// account is not looked up here.
    /// - Throws: `AuthError` for a malformed address, continue URL, challenge or ID token, and
    ///   `tooManyAttempts` past the per-address limit.
    public func sendEmailLink(_ input: EmailLinkRequest) throws(AuthError) {
        let email = try parseEmail(input.email)
        let continueURL = try checkContinueURL(input.continueURL)
        try Self.checkChallenge(input.codeChallenge)
        let sessionUid = try input.idToken.map { token throws(AuthError) in try verifyIDToken(token).account.uid }
        let now = clock.unixSeconds()
        // The key that will derive the mail's 6-digit code is fixed now, so the content stage only reads.
        let request = ActionRequest(
            id: try Self.newRequestID(at: clock.now()), purpose: .signIn, email: email, uid: sessionUid, continueURL: continueURL,
            locale: input.locale.flatMap(Self.cleanLocale), codeChallenge: input.codeChallenge, createdAt: now,
            expiresAt: now + config.ttlSignIn, sixDigitKeyID: keys.current.actionCodes.activeKeyID)
        try recordRequest(request, intent: .signIn(requestID: request.id))
    }

    /// Completes an email-link sign-in (or a password sign-up's confirmation) by link, oobCode, or
    /// address + 6-digit code, resolving the six cases of API.md's table.
    /// - Throws: `AuthError`: `INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, `EMAIL_MISMATCH`,
    ///   `INVALID_CODE_VERIFIER`, `MIGRATION_REQUIRED` (nothing consumed), `CREDENTIAL_ALREADY_IN_USE`,
    ///   `USER_DISABLED`, `TOO_MANY_ATTEMPTS_TRY_LATER`.
    public func completeEmailLink(_ input: EmailLinkCompletion) throws(AuthError) -> LoginDescriptor {
        let presented = try input.idToken.map { token throws(AuthError) in try verifyIDToken(token).account }
        let typedEmail = try input.email.map { text throws(AuthError) in try parseEmail(text) }
        let ring = keys.current
        let now = clock.unixSeconds()
        let request: ActionRequest
        let codeExpiry: Int64
        var cameByLink = true
        switch try codeInput(link: input.link, oobCode: input.oobCode, code: input.code) {
        case .link(let link):
            guard link.mode == .signIn else {
                throw .invalidCode("This is a \(link.mode.rawValue) link, not a sign-in link.")
            }
            (request, codeExpiry) = try signInRequest(oobCode: link.oobCode, ring: ring, now: now)
        case .oobCode(let text):
            (request, codeExpiry) = try signInRequest(oobCode: text, ring: ring, now: now)
        case .sixDigitCode(let digits):
            guard let typedEmail else { throw .invalidArgument("email is required with the 6-digit code.") }
            request = try sixDigitRequest(digits, email: typedEmail, ring: ring, now: now)
            codeExpiry = request.expiresAt
            cameByLink = false
        }
        // PKCE means PKCE: a link sent with a challenge completes only with its verifier (the
        // typed 6-digit code, which proves the mailbox, is the way in from another device).
        let verifierMatches = try checkVerifier(input.codeVerifier, request: request)
        if cameByLink {
            if request.codeChallenge != nil, !verifierMatches { throw .invalidCodeVerifier }
            if let typedEmail, typedEmail != request.email { throw .emailMismatch }
        }
        // The session given when the link was asked for binds it only when that device comes
        // back: the same session, or the verifier. Otherwise this is a plain sign-in to the
        // address's own account — never an upgrade of a stranger's anonymous account.
        let sameSession = request.uid != nil && presented?.uid == request.uid
        return try finishSignIn(
            request: request, codeExpiry: codeExpiry, presented: presented, askerReturned: verifierMatches || sameSession,
            allowMigration: input.allowMigration, method: request.purpose == .signUp ? "password" : "emailLink", now: now)
    }

    private func signInRequest(oobCode: String, ring: KeyRing, now: Int64) throws(AuthError) -> (ActionRequest, Int64) {
        try read { tx in
            let (code, request) = try self.verifiedRequest(oobCode, expecting: .signIn, ring: ring, now: now, tx: tx)
            return (request, code.expiresAt)
        }
    }

    /// Checks the shape of a PKCE S256 challenge.
    /// - Throws: `invalidArgument` unless it is base64url of 32 bytes.
    static func checkChallenge(_ challenge: String?) throws(AuthError) {
        guard let challenge else { return }
        guard challenge.count == 43, Base64URL.decode(challenge)?.count == 32 else {
            throw .invalidArgument("codeChallenge must be base64url(SHA-256(codeVerifier)): 43 characters.")
        }
    }

    /// True when `verifier` answers the request's PKCE challenge; false when either is absent.
    /// - Throws: `invalidCodeVerifier` for a verifier that does not match.
    private func checkVerifier(_ verifier: String?, request: ActionRequest) throws(AuthError) -> Bool {
        guard let challenge = request.codeChallenge, let verifier else { return false }
        let computed = Base64URL.encode(SHA256.hash(verifier))
        guard ConstantTime.equals(Array(computed.utf8), Array(challenge.utf8)) else { throw .invalidCodeVerifier }
        return true
    }

    /// The bucket of an address's guess budget of `kind`.
    func guessBucket(_ kind: GuessKind, _ email: EmailAddress) -> [UInt8] {
        addressBucket("guess-\(kind.rawValue)", email)
    }

    /// Clears every guess budget of `email`: its owner proved the mailbox (a link completed, a
    /// reset applied), which is also how the owner gets out of a lock an attacker caused.
    func clearGuessBudgets(of email: EmailAddress, tx: any StoreWriter) throws {
        for kind in GuessKind.allCases { try tx.setGuessRecord(bucket: guessBucket(kind, email), nil) }
    }

    /// Finds the request a 6-digit code belongs to, within the address's guess budget: while the
    /// address is over it every code is refused, the right one included; a wrong code counts
    /// against the budget and against every open code of the address (5 wrong tries kill a code).
    /// Asking for a new code resets nothing.
    private func sixDigitRequest(_ digits: String, email: EmailAddress, ring: KeyRing, now: Int64) throws(AuthError) -> ActionRequest {
        let bucket = guessBucket(.sixDigitCode, email)
        let (budget, maximum) = (config.guessBudget, config.maximumWrongCodes)
        enum Outcome: Sendable { case found(ActionRequest), wrong, limited(Int64) }
        let outcome = try write { tx -> Outcome in
            let record = try tx.guessRecord(bucket: bucket)
            if let wait = budget.retryAfter(record, now: now) { return .limited(wait) }
            let candidates = try tx.openActionRequests(purpose: .signIn, address: email, now: now)
                .filter { $0.sixDigitKeyID != nil }
            for candidate in candidates where candidate.wrongTries < maximum {
                guard let keyID = candidate.sixDigitKeyID,
                    let expected = Self.sixDigitCode(requestID: candidate.id, keyID: keyID, ring: ring)
                else { continue }
                if ConstantTime.equals(Array(expected.utf8), Array(digits.utf8)) { return .found(candidate) }
            }
            try tx.setGuessRecord(bucket: bucket, budget.failing(record, now: now))
            for var candidate in candidates {
                candidate.wrongTries += 1
                try tx.updateActionRequest(candidate)
            }
            return .wrong
        }
        switch outcome {
        case .found(let request): return request
        case .wrong: throw .invalidCode("The 6-digit code is wrong or has expired.")
        case .limited(let wait): throw .tooManyAttempts(retryAfter: wait)
        }
    }

    /// The shared end of every sign-in: resolves the six cases in one transaction, consumes the
    /// request's code (except when refusing), and issues the session.
    ///
    /// `askerReturned`: the device that asked for the link is the one completing it (same session
    /// or PKCE verifier). Only then does the request's own session (a sign-up's anonymous account)
    /// count, and only then does a password chosen at sign-up apply.
    func finishSignIn(
        request: ActionRequest, codeExpiry: Int64, presented: Account?, askerReturned: Bool, allowMigration: Bool,
        method: String, now: Int64
    ) throws(AuthError) -> LoginDescriptor {
        let issue = try sessionIssuer()
        return try write { tx -> LoginDescriptor in
            // Re-read inside the transaction: the state may have moved since the checks above.
            guard let current = try tx.actionRequest(id: request.id), current.consumedAt == nil else {
                throw AuthError.code(.alreadyUsed)
            }
            var session = try presented.flatMap { try tx.account(uid: $0.uid) }
            if presented == nil, askerReturned, let uid = current.uid {
                // The session that asked for the link, proved by the verifier (a sign-up upgrading
                // its anonymous account on the device that signed up).
                session = try tx.account(uid: uid).flatMap { $0.isAnonymous ? $0 : nil }
            }
            let holder = try tx.account(address: current.email)
            let resolution = SignInResolution.resolve(presented: session, holder: holder, allowMigration: allowMigration)
            var migration: LoginDescriptor.Migration?
            var account: Account
            switch resolution {
            case .migrationRequired(let anonymousUid):
                throw AuthError.migrationRequired(anonymousUid: anonymousUid)
            case .credentialInUse:
                throw AuthError.credentialAlreadyInUse
            case .create:
                account = Account(uid: try Self.newID(), email: current.email, createdAt: now)
                try tx.insertAccount(account)
            case .signIn(let uid), .reauthenticate(let uid):
                guard let found = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
                account = found
            case .upgradeAnonymous(let uid):
                guard var found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                found.email = current.email
                account = found
            case .link(let uid):
                guard var found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                if let old = found.email, old != current.email {
                    try Self.queueRecovery(uid: uid, old: old, new: current.email, tx: tx, now: now, ttl: self.config.ttlRecoverEmail)
                }
                found.email = current.email
                account = found
            case .migrate(let from, let to):
                guard let found = try tx.account(uid: to) else { throw AuthError.code(.stateChanged) }
                try tx.deleteAccount(uid: from)
                account = found
                migration = .init(fromUid: from, toUid: to, allowMigration: true)
            }
            if account.disabled { throw AuthError.userDisabled }
            guard try self.consume(current, expiresAt: max(codeExpiry, current.expiresAt), now: now, tx: tx) else {
                throw AuthError.code(.alreadyUsed)
            }
            // The link proved the mailbox.
            account.emailVerified = true
            account.providers.insert(.emailLink)
            // A password chosen at sign-up applies only on the device that chose it: otherwise
            // whoever asked could pick the password of an account the address's owner creates.
            var needsPassword = false
            if current.purpose == .signUp, resolution.isNewUser, let hash = current.passwordHash {
                if askerReturned {
                    account.passwordHash = hash
                    account.providers.insert(.password)
                } else {
                    needsPassword = account.passwordHash == nil
                }
            }
            try self.clearGuessBudgets(of: current.email, tx: tx)
            account.locale = account.locale ?? current.locale
            account.lastSignInAt = now
            try tx.updateAccount(account)
            let issued = try issue(account, method, now, nil, tx)
            return LoginDescriptor(
                uid: account.uid, email: account.email?.address, isNewUser: resolution.isNewUser, session: issued,
                migration: migration, needsPassword: needsPassword)
        }
    }

    /// Records a recoverEmail request for the old address and queues its mail.
    static func queueRecovery(
        uid: String, old: EmailAddress, new: EmailAddress, tx: any StoreWriter, now: Int64, ttl: Int64
    ) throws {
        let recovery = ActionRequest(
            id: try newRequestID(at: Date(timeIntervalSince1970: TimeInterval(now))), purpose: .recoverEmail, email: old, uid: uid, otherEmail: new, createdAt: now,
            expiresAt: now + ttl)
        try tx.insertActionRequest(recovery)
        _ = try tx.enqueue(.recoverEmail(requestID: recovery.id), recipient: old, now: now, giveUpAt: recovery.expiresAt)
    }

    /// A BCP 47-looking tag (letters, digits, hyphens, ≤ 35 characters), lower-cased; nil otherwise.
    static func cleanLocale(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 35,
            trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        return trimmed.replacingOccurrences(of: "_", with: "-").lowercased()
    }
}
