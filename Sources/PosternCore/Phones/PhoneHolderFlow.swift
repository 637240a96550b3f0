import Foundation
import PosternCrypto

/// The number's holder's side of phone numbers by consent of both parties: the holder may write
/// the claim first (for the account of an address, unapproved until its owner approves), and
/// proves, reads or deletes a claim with the code the SMS carried — the code is the key, and
/// every failure, a missing claim included, is the same `invalidPhoneCode`.
public final class PhoneHolderFlow: Sendable {
    /// The persisters this flow's transactions use: those of claiming a number (``PhoneClaiming``),
    /// whose steps its transactions run. Its closures are typed with these, so the compiler holds
    /// the flow to them.
    typealias Writes = PhoneClaiming.Writes
    /// What this flow's reads use.
    typealias Reads = PhoneClaiming.Reads

    let context: FlowContext
    let sessions: SessionFlow
    let claiming: PhoneClaiming

    init(context: FlowContext, sessions: SessionFlow, claiming: PhoneClaiming) {
        self.context = context
        self.sessions = sessions
        self.claiming = claiming
    }

    /// The number's holder writes the claim first (the seed's order): for the account of `email`,
    /// unapproved until its owner approves. The caller must be signed in to an account with a
    /// proved address or a phone (without `--phone-sign-in`: an anonymous session costs one
    /// request, so it buys no SMS; with it, anyone may be sent a code anyway). Answers alike
    /// whether or not the address has an account, and whether or not the number is held.
    /// - Throws: `invalidIDToken`, `invalidEmail`, `invalidPhoneNumber`, the SMS caps' refusals
    ///   (`anonymousAccount` for an anonymous caller without `--phone-sign-in`).
    public func start(
        idToken: String, phoneNumber: String, email: String, locale: String?, clientIP: String?, challengePass: ChallengePass = .none
    ) throws(AuthError) -> PhoneClaimView {
        let (caller, _) = try sessions.verifyIDToken(idToken)
        let number = try context.parsePhoneNumber(phoneNumber)
        let address = try context.parseEmail(email)
        let uid = try context.read { (tx: Reads) in try tx.account(address: address)?.uid }
        var view = try claiming.open(uid: uid, number: number, ownerApproved: false, caller: .of(caller), locale: locale, clientIP: clientIP,
            challengePass: challengePass)
        // The answer must not say whether the address has an account.
        view.ownerApproved = false
        return view
    }

    /// The holder proves the number with the code (the hosted page the SMS links to, or an app).
    /// - Throws: `invalidPhoneCode` for every failure, a missing claim included; `tooManyAttempts`
    ///   while the number's guessing budget is locked.
    public func prove(claimID: String, code: String) throws(AuthError) -> PhoneProof {
        try PhoneKeys.checkCodeShape(code)
        try PhoneKeys.checkClaimID(claimID)
        return try claiming.proveCode(claimID: claimID, code: code, owner: nil)
    }

    /// The holder reads the claim its code proves.
    /// - Throws: `invalidPhoneCode` for every failure; `tooManyAttempts` while the number's budget is locked.
    public func read(claimID: String, code: String) throws(AuthError) -> PhoneClaimView {
        try PhoneKeys.checkCodeShape(code)
        try PhoneKeys.checkClaimID(claimID)
        let now = context.clock.unixSeconds()
        let settlement = claiming.settlement
        return try access(claimID: claimID, code: code, now: now) { life, tx in
            var life = life
            try settlement.settle(&life, released: false, tx: tx, now: now)
            guard let current = try tx.phoneClaim(id: claimID) else { throw AuthError.invalidPhoneCode }
            return PhoneClaimView(current, life: settlement.life(current), now: now)
        }
    }

    /// The holder deletes the claim its code proves (before or after the proof; a verified
    /// number is then free again).
    /// - Throws: `invalidPhoneCode` for every failure; `tooManyAttempts` while the number's budget is locked.
    public func delete(claimID: String, code: String) throws(AuthError) {
        try PhoneKeys.checkCodeShape(code)
        try PhoneKeys.checkClaimID(claimID)
        let now = context.clock.unixSeconds()
        let events = context.events
        try access(claimID: claimID, code: code, now: now) { life, tx in
            _ = try tx.deletePhoneClaim(id: claimID)
            if let uid = life.claim.uid { try events.record(.phoneRemoved(uid: uid, claimID: claimID), tx: tx, now: now) }
        }
    }

    /// Checks `code` against the claim for a read or a delete, counting a wrong one, then runs `body`.
    private func access<T: Sendable>(
        claimID: String, code: String, now: Int64, _ body: @escaping @Sendable (PhoneClaimLife, Writes) throws -> T
    ) throws(AuthError) -> T {
        let ring = context.keys.current
        let settlement = claiming.settlement
        let budget = claiming.budget
        let outcome = try context.write { (tx: Writes) -> HolderOutcome<T> in
            guard let claim = try tx.phoneClaim(id: claimID) else { return .refused(.wrong) }
            let bucket = PhoneGuessBudget.bucket(numberHash: claim.numberHash, ring: ring)
            if let wait = try budget.lock(bucket: bucket, tx: tx, now: now) { return .limited(wait) }
            var life = settlement.life(claim)
            let matches = ConstantTime.equals(PhoneKeys.codeHash(claimID: claimID, code: code, ring: ring), claim.codeHash)
            let check = life.checkCode(matches: matches, proving: false, now: now)
            guard check == .holder else {
                if check == .wrong {
                    try tx.updatePhoneClaim(life.claim)
                    try budget.countWrongGuess(bucket: bucket, tx: tx, now: now)
                }
                return .refused(check)
            }
            // The code proved the number: its budget starts afresh.
            try tx.setGuessRecord(bucket: bucket, nil)
            return .done(try body(life, tx))
        }
        switch outcome {
        case .done(let value): return value
        case .refused(let check): throw claiming.refusal(check)
        case .limited(let wait): throw budget.locked(wait)
        }
    }
}

/// What a holder's read or delete came to.
private enum HolderOutcome<T: Sendable>: Sendable {
    case done(T)
    case refused(PhoneClaimLife.CodeCheck)
    case limited(Int64)
}
