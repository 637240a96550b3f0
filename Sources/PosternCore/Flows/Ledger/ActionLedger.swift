import Foundation
import PosternCrypto

/// The action-request ledger: records what was asked for an address (after its per-address
/// limit), mints and verifies the one code of each request, keeps the single-use ledger, derives
/// the 6-digit codes and keeps the per-address guess budgets. Every flow that mails a code or
/// completes one goes through here.
public final class ActionLedger: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & ActionRequestWriter & LimitWriter & OutboxWriter & ProviderIdentityWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ActionRequestReader & LimitReader & OutboxReader

    let context: FlowContext
    /// On a store several daemons share: the challenge's thresholds and the mail caps, counted in
    /// slices outside the request's transaction (nil on a store one machine serves, where they are
    /// counted inside it).
    let sharedCounts: SharedWindowCounts?

    init(context: FlowContext) {
        self.context = context
        sharedCounts = context.store.isConfinedToThisMachine ? nil : SharedWindowCounts(context: context)
    }

    /// The life of `request` under the configured limits.
    func life(_ request: ActionRequest) -> ActionRequestLife {
        ActionRequestLife(request, maximumWrongTries: context.config.maximumWrongCodes)
    }

    // MARK: recording

    /// The per-address bucket for `action`: an HMAC under the active action-code key, so the
    /// table holds no addresses, and a copy of the database alone cannot be searched with a list
    /// of addresses. Rotating that key starts the counts afresh. Keyed on the address's
    /// ``CanonicalAddress``, so every spelling of one mailbox (`a.d.a+1@gmail.com`,
    /// `ada@googlemail.com`) shares one mail limit and one guess budget of each kind; every limit,
    /// every budget and every clearing of one goes through here, so each is cleared under the key
    /// it was counted under.
    func addressBucket(_ action: String, _ email: EmailAddress) -> [UInt8] {
        let counted = CanonicalAddress(email, subaddressDomains: context.config.subaddressDomains)
        return Array(context.keys.current.actionCodes.activeMAC.authenticate(Array("postern-rate|\(action)|\(counted.text)".utf8)).prefix(16))
    }

    /// Records a mail request and queues its intent, after the per-address limit, the challenge
    /// (``ChallengeGate``: `challenge` is what a public request brought; nil for a signed-in
    /// user's request, which it does not gate) and the mail caps (``MailCaps``: per recipient
    /// domain and in all). Does the same work whether or not the address has an account.
    /// - Throws: `AuthError.tooManyAttempts` past the limit or a cap; `challengeRequired`.
    func record(_ request: ActionRequest, intent: MailIntent, challenge: ChallengePass?) throws(AuthError) {
        try AnswerSlot<Void, AuthError>.waiting(missing: .internalError("the request was not recorded")) { done in
            record(request, intent: intent, challenge: challenge, then: done)
        }
    }

    /// ``record(_:intent:challenge:)`` handing its outcome to `then` (after the commit, on the
    /// store's writer thread where the store queues writes; see ``FlowContext/write(_:then:)``).
    func record(
        _ request: ActionRequest, intent: MailIntent, challenge: ChallengePass?, then: @escaping @Sendable (Result<Void, AuthError>) -> Void
    ) {
        let (interval, perHour) = (context.config.mailInterval, context.config.mailPerHour)
        // With both limits off there is nothing to count (the same for every address).
        let bucket = interval > 0 || perHour > 0 ? addressBucket(request.purpose.rawValue, request.email) : nil
        let metrics = context.metrics
        let caps = context.mailCaps
        let gate = context.challenges
        let counted = caps.isOn || challenge != nil
            ? CanonicalAddress(request.email, subaddressDomains: context.config.subaddressDomains) : nil
        // On a store several daemons share, the challenge's thresholds and the caps are counted
        // first, outside the transaction (their rows are every request's: inside it, concurrent
        // serializable transactions failed each other on them), and put back unless the request
        // is made. A request both over a threshold or a cap and over its address's limit is then
        // answered by the threshold or the cap: either way it depends on no account.
        var precounted: [SharedWindowCounts.Counted] = []
        if let shared = sharedCounts {
            // The counters this daemon holds no slice of (a domain or a client not seen within a
            // second), taken in one transaction rather than one each.
            var wanted: [SharedWindowCounts.Wanted] = []
            if let challenge { wanted += gate.thresholdsWanted(challenge, domain: counted?.domain) }
            if caps.isOn, let counted { wanted += caps.capsWanted(counted, now: request.createdAt) }
            shared.restock(wanted, now: request.createdAt)
            do {
                if let challenge { precounted += try gate.countThresholds(challenge, domain: counted?.domain, now: request.createdAt, counts: shared) }
                if caps.isOn, let counted { precounted += try caps.admit(counted, now: request.createdAt, counts: shared) }
            } catch {
                shared.uncount(precounted)
                then(.failure(FlowContext.failure(error)))
                return
            }
        }
        let (shared, spent) = (sharedCounts, precounted)
        context.write({ (tx: Writes) -> Int64? in
            if let bucket, let wait = try tx.rateLimit(bucket: bucket, now: request.createdAt, interval: interval, perHour: perHour) {
                return wait
            }
            // After the address's own limit (so a refused request spends no solution and no cap);
            // the challenge's and a cap's refusals throw, rolling back the address's count too:
            // nothing is queued or counted.
            if let challenge { try gate.admit(challenge, domain: counted?.domain, now: request.createdAt, tx: tx, thresholdsCounted: shared != nil) }
            if caps.isOn, shared == nil, let counted { try caps.admit(counted, now: request.createdAt, tx: tx) }
            try tx.insertActionRequest(request)
            try tx.queue(intent, recipient: request.email, now: request.createdAt, giveUpAt: request.expiresAt)
            return nil
        }, then: { result in
            if case .success(nil) = result {} else { shared?.uncount(spent) }
            switch result {
            case .success(let wait?): then(.failure(.tooManyAttempts(retryAfter: wait)))
            case .success(nil):
                metrics.requested(request.purpose.action)
                then(.success(()))
            case .failure(let error): then(.failure(error))
            }
        })
    }

    /// Records a recoverEmail request for the old address and queues its mail, in the caller's
    /// transaction.
    static func queueRecovery(
        uid: String, old: EmailAddress, new: EmailAddress, tx: any ActionRequestWriter & OutboxWriter, now: Int64, ttl: Int64
    ) throws {
        let recovery = ActionRequest(
            id: try FlowContext.newRequestID(at: Date(timeIntervalSince1970: TimeInterval(now))), purpose: .recoverEmail,
            email: old, uid: uid, otherEmail: new, createdAt: now, expiresAt: FlowContext.adding(ttl, to: now))
        try tx.insertActionRequest(recovery)
        try tx.queue(.recoverEmail(requestID: recovery.id), recipient: old, now: now, giveUpAt: recovery.expiresAt)
    }

    /// Queues a notice (no code) for `recipient` inside a transaction.
    static func queueNotice(_ intent: MailIntent, to recipient: EmailAddress, tx: any OutboxWriter, now: Int64) throws {
        try tx.queue(intent, recipient: recipient, now: now, giveUpAt: now + 86_400)
    }

    /// Ends every open sign-in and sign-up request of `email`, in the caller's transaction.
    func endOpenSignIns(of email: EmailAddress, tx: any ActionRequestWriter, now: Int64) throws {
        try endOpenRequests(of: email, purposes: [.signIn, .signUp], uid: nil, tx: tx, now: now)
    }

    /// The purposes whose links replace each other: a sign-in, a sign-up's confirmation and an
    /// invitation all sign in; every other purpose only itself.
    static func siblings(of purpose: ActionRequest.Purpose) -> [ActionRequest.Purpose] {
        switch purpose {
        case .signIn, .signUp, .invitation: [.signIn, .signUp, .invitation]
        default: [purpose]
        }
    }

    /// Ends every open request of `purposes` for `email` (only those of `uid` when it is set),
    /// in the caller's transaction: they were superseded (their nonce never reaches the
    /// single-use ledger, which is how a refusal tells "superseded" from "used").
    func endOpenRequests(
        of email: EmailAddress, purposes: [ActionRequest.Purpose], uid: String?, tx: any ActionRequestWriter, now: Int64
    ) throws {
        for purpose in purposes {
            // The store answers a page at a time (the newest 20); each page is ended, so the loop ends.
            var page = try tx.openActionRequests(purpose: purpose, address: email, now: now)
                .filter { uid == nil || $0.uid == uid }
            while !page.isEmpty {
                for open in page {
                    var life = life(open)
                    guard life.consume(at: now) else { continue }
                    try tx.updateActionRequest(life.request)
                }
                page = try tx.openActionRequests(purpose: purpose, address: email, now: now)
                    .filter { life($0).isOpen(now: now) && (uid == nil || $0.uid == uid) }
            }
        }
    }

    // MARK: codes

    /// The state a request's code is bound to, computed the same way when minting (content stage)
    /// and when verifying: nil when the state it needs is gone (account deleted, address moved).
    static func binding(for request: ActionRequest, tx: any AccountReader) throws -> StateBinding? {
        switch request.purpose {
        case .signIn, .signUp, .invitation:
            return StateBinding(request.id, request.email.normalized)
        case .resetPassword:
            guard let uid = request.uid, let account = try tx.account(uid: uid), account.email == request.email else {
                return nil
            }
            return account.credentialBinding
        case .verifyEmail:
            guard let uid = request.uid, let account = try tx.account(uid: uid), account.email == request.email else {
                return nil
            }
            return StateBinding(uid, request.email.normalized)
        case .changeEmail:
            // email: the new address; otherEmail: the account's address when the change was asked.
            // The session version too: a recovery of the address, a password reset or "sign out
            // everywhere" (each revokes every session) ends the changes still pending. Otherwise a
            // thief who filed several, applied one and was thrown out by the owner's recovery had
            // the account back on the old address, which the next pending link matched again.
            guard let uid = request.uid, let old = request.otherEmail, let account = try tx.account(uid: uid),
                account.email == old
            else { return nil }
            return StateBinding(uid, old.normalized, request.email.normalized, String(account.sessionVersion))
        case .recoverEmail:
            // email: the old address (the recipient); otherEmail: the address the account moved to.
            guard let uid = request.uid, let moved = request.otherEmail, let account = try tx.account(uid: uid),
                account.email == moved
            else { return nil }
            return StateBinding(uid, moved.normalized, request.email.normalized)
        }
    }

    /// The request id a code's nonce names.
    static func requestID(of code: ActionCode) -> String { Base64URL.encode(code.nonce) }

    /// The 6-digit code of a sign-in request: derived from its id under the key `keyID`, so the
    /// store keeps no code and the hosted page can show it to whoever holds the link.
    static func sixDigitCode(requestID: String, keyID: UInt32, ring: KeyRing) -> String? {
        guard let mac = ring.actionCodes.digest(Array("six-digit-code|\(requestID)".utf8), keyID: keyID) else { return nil }
        let value = UInt32(mac[0]) << 24 | UInt32(mac[1]) << 16 | UInt32(mac[2]) << 8 | UInt32(mac[3])
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Extracts the oobCode (or 6 digits) from what a caller sent: a pasted `link`, an `oobCode`
    /// or a `code`, validated against the public URL and allowed hosts; consumes nothing.
    /// - Throws: `AuthError.invalidCode` with a reason a person can act on, `invalidArgument`.
    func codeInput(link: String?, oobCode: String?, code: String?) throws(AuthError) -> PastedAction {
        if let link, !link.isEmpty {
            do { return try context.parser.parse(link) } catch { throw .invalidCode(error.message) }
        }
        if let oobCode, !oobCode.isEmpty { return .oobCode(oobCode) }
        if let code, !code.isEmpty {
            guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidArgument("code must be the 6 digits from the mail.")
            }
            return .sixDigitCode(code)
        }
        throw .invalidArgument("Give link, oobCode or code.")
    }

    /// Counts a refused link (internal and public reason) and makes its error.
    func refuse(_ error: ActionCodeError) -> AuthError {
        context.metrics.refused(error)
        return .code(error)
    }

    /// Verifies an oobCode and loads its request, checking that it is unused and still bound to
    /// the current state. `expecting` nil accepts any action.
    ///
    /// Only a code whose signature is valid (so: one this server minted, held by whoever it was
    /// mailed to or given to) gets a reason beyond the generic `INVALID_OOB_CODE`: expired, used
    /// or superseded. Those concern the code itself, never the account: every valid code does
    /// the same reads (its request, the single-use ledger, the state binding) whatever the
    /// reason, so the time of the answer says no more than its words.
    func verifiedRequest(
        _ text: String, expecting: EmailAction?, ring: KeyRing, now: Int64, tx: any ActionRequestReader & AccountReader
    ) throws -> (ActionCode, ActionRequest) {
        let code: ActionCode
        do { code = try ring.actionCodes.verify(text, now: now) } catch { throw refuse(error) }
        if let expecting, code.action != expecting { throw refuse(.wrongAction) }
        let found = try tx.actionRequest(id: Self.requestID(of: code))
        let consumed = try tx.isConsumed(nonce: code.nonce)
        guard let request = found, request.purpose.action == code.action else { throw refuse(.stateChanged) }
        let binding = try Self.binding(for: request, tx: tx)
        // The code's own expiry was checked with its MAC; the request's life says whether it was used.
        if consumed { throw refuse(.alreadyUsed) }
        if life(request).phase(now: now) == .used {
            // Ended without its nonce in the ledger: a newer link of its kind was used (or a reset
            // ended it) — except a cancelled approval, which the page already said.
            let cancelled = request.approval != nil && request.approval?.approvedAt == nil
            throw refuse(cancelled ? .stateChanged : .superseded)
        }
        guard let binding, ConstantTime.equals(binding.bytes, code.binding.bytes) else {
            throw refuse(.stateChanged)
        }
        return (code, request)
    }

    /// Where the sign-in link `text` stands for the browser or device holding `verifier` (the
    /// `postern_browser` cookie, or a PKCE verifier): nil when the code is not genuine or names
    /// no request. Reads only; consumes nothing. The code's expiry is not this question's: a used
    /// link is asked about after its life too.
    func browserCheck(_ text: String, verifier: String?, tx: any ActionRequestReader) throws -> BrowserCheck? {
        guard let code = try? context.keys.current.actionCodes.verifyIgnoringExpiry(text), code.action == .signIn,
            let request = try tx.actionRequest(id: Self.requestID(of: code)), request.purpose.action == code.action
        else { return nil }
        let used = try tx.isConsumed(nonce: code.nonce)
        guard let challenge = request.codeChallenge else { return BrowserCheck(binding: .unbound, used: used) }
        let same = verifier.map { FlowContext.verifier($0, answers: challenge) } ?? false
        return BrowserCheck(binding: same ? .sameBrowser : .otherBrowser, used: used, browserBound: request.browserBound)
    }

    /// What a pasted text holds (a link, a bare oobCode, or 6 digits), consuming nothing.
    /// - Throws: `AuthError.invalidCode` with a reason a person can act on.
    public func readPasted(_ text: String) throws(AuthError) -> PastedAction {
        try codeInput(link: text, oobCode: nil, code: nil)
    }

    /// Where the sign-in link `oobCode` stands for the browser holding `browserVerifier` (its
    /// `postern_browser` cookie): bound or not, this browser or another, used or not. Nil for a
    /// code that is not genuine, not a sign-in code, or names no request. Reads only.
    public func browserCheck(oobCode: String, browserVerifier: String?) -> BrowserCheck? {
        try? context.read { (tx: Reads) in try self.browserCheck(oobCode, verifier: browserVerifier, tx: tx) } ?? nil
    }

    /// Mints the code of `request` and builds its link; nil when the state it binds to is gone.
    func mintLink(for request: ActionRequest, ring: KeyRing, now: Int64, tx: any AccountReader) throws -> (link: String, code: String)? {
        guard let binding = try Self.binding(for: request, tx: tx), let nonce = Base64URL.decode(request.id) else {
            return nil
        }
        let minted = try ring.actionCodes.mint(
            request.purpose.action, binding: binding, ttl: request.expiresAt - now, now: now, nonce: nonce)
        let link = LinkMaker(publicURL: context.config.publicURL).link(
            mode: request.purpose.action, code: minted.text, continueURL: request.continueURL, lang: request.locale)
        return (link, minted.text)
    }

    /// Marks a request's code as used, in the caller's transaction; false when it already was.
    ///
    /// Using a link ends the address's other open links of the same kind (for the same account
    /// where the kind has one): once one worked, the others are superseded, and say so.
    func consume(_ request: ActionRequest, expiresAt: Int64, now: Int64, tx: any ActionRequestWriter) throws -> Bool {
        var life = life(request)
        guard let nonce = Base64URL.decode(request.id), life.consume(at: now), try tx.consume(nonce: nonce, expiresAt: expiresAt) else {
            return false
        }
        context.metrics.consumed(request.purpose.action)
        try tx.updateActionRequest(life.request)
        let uid: String? = switch request.purpose {
        case .signIn, .signUp, .invitation: nil
        default: request.uid
        }
        try endOpenRequests(of: request.email, purposes: Self.siblings(of: request.purpose), uid: uid, tx: tx, now: now)
        return true
    }

    /// The 6-digit code for the hosted page of a sign-in link, or nil (a PKCE link's page never
    /// shows it: the person has it in the mail, and the link alone must not be enough).
    public func sixDigitCode(forSignInCode text: String) -> String? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        return try? context.read { (tx: Reads) in
            let (_, request) = try self.verifiedRequest(text, expecting: .signIn, ring: ring, now: now, tx: tx)
            guard request.codeChallenge == nil, let keyID = request.sixDigitKeyID else { return nil }
            return Self.sixDigitCode(requestID: request.id, keyID: keyID, ring: ring)
        }
    }

    // MARK: guess budgets

    /// The bucket of an address's guess budget of `kind`.
    func guessBucket(_ kind: GuessKind, _ email: EmailAddress) -> [UInt8] {
        addressBucket("guess-\(kind.rawValue)", email)
    }

    /// Clears every guess budget of `email`: its owner proved the mailbox (a link completed, a
    /// reset applied), which is also how the owner gets out of a lock an attacker caused.
    func clearGuessBudgets(of email: EmailAddress, tx: any LimitWriter) throws {
        for kind in GuessKind.allCases { try tx.setGuessRecord(bucket: guessBucket(kind, email), nil) }
    }

    /// Finds the request a 6-digit code belongs to, within the address's guess budget: while the
    /// address is over it every code is refused, the right one included; a wrong code counts
    /// against the budget and against every open code of the address (5 wrong tries kill a code).
    /// Asking for a new code resets nothing.
    /// - Throws: `invalidCode`, `tooManyAttempts`.
    func requestForSixDigitCode(_ digits: String, email: EmailAddress, ring: KeyRing, now: Int64) throws(AuthError) -> ActionRequest {
        let bucket = guessBucket(.sixDigitCode, email)
        let budget = context.config.guessBudget
        enum Outcome: Sendable { case found(ActionRequest), wrong, limited(Int64) }
        let outcome = try context.write { (tx: Writes) -> Outcome in
            let record = try tx.guessRecord(bucket: bucket)
            if let wait = budget.retryAfter(record, now: now) { return .limited(wait) }
            let candidates = try tx.openActionRequests(purpose: .signIn, address: email, now: now).map(self.life)
            for candidate in candidates where candidate.acceptsSixDigitCode(now: now) {
                guard let keyID = candidate.request.sixDigitKeyID,
                    let expected = Self.sixDigitCode(requestID: candidate.request.id, keyID: keyID, ring: ring)
                else { continue }
                if ConstantTime.equals(Array(expected.utf8), Array(digits.utf8)) { return .found(candidate.request) }
            }
            try tx.setGuessRecord(bucket: bucket, budget.failing(record, now: now))
            for var candidate in candidates where candidate.request.sixDigitKeyID != nil {
                candidate.wrongSixDigitCode()
                try tx.updateActionRequest(candidate.request)
            }
            return .wrong
        }
        switch outcome {
        case .found(let request): return request
        case .wrong: throw .invalidCode("The 6-digit code is wrong or has expired.")
        case .limited(let wait): throw .tooManyAttempts(retryAfter: wait)
        }
    }
}

extension ActionCodeAuthority {
    /// HMAC of `message` under the key `keyID` (active or retired), or nil when the ring has no such key.
    public func digest(_ message: [UInt8], keyID: UInt32) -> [UInt8]? {
        key(id: keyID)?.mac.authenticate(message)
    }
}
