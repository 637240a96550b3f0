import Foundation
import PosternCrypto

/// The steps of a claim both parties take, in one place: opening it (its SMS queued past the
/// toll-fraud gate), proving its number with the code, and how an account's claims read.
///
/// Claims are found by id and checked by their code's keyed hash — never looked up by number
/// (supabase/auth#2430 verified a number on the wrong user that way). Every answer before the
/// proof is the same whether another account holds the number or not.
final class PhoneClaiming: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & ActionRequestWriter & SessionWriter & LimitWriter & PhoneWriter & SMSOutboxWriter & OutboxWriter & WebhookWriter
        & ProviderIdentityWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ActionRequestReader & SessionReader & LimitReader & PhoneReader & SMSOutboxReader & OutboxReader & WebhookReader

    let context: FlowContext
    let settlement: PhoneSettlement
    let budget: PhoneGuessBudget

    init(context: FlowContext, settlement: PhoneSettlement) {
        self.context = context
        self.settlement = settlement
        budget = PhoneGuessBudget(context: context)
    }

    /// Records a claim and queues its SMS in one write, after the challenge for a caller that is not
    /// `identified` when `--phone-sign-in` lets such a caller be sent SMS (an anonymous session is
    /// one request away: it pays as a signed-out caller of `POST /v1/phone/send` does;
    /// ``ChallengeGate``) and the SMS caps (the number's own cool-off
    /// and hourly cap answer alike and send nothing: ``SMSAdmission/Decision/silenced``).
    func open(
        uid: String?, number: PhoneNumber, ownerApproved: Bool, caller: SMSAdmission.Caller, locale: String?, clientIP: String?,
        challengePass: ChallengePass
    ) throws(AuthError)
        -> PhoneClaimView
    {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let id = try FlowContext.newID()
        let ttl = context.config.phoneCodeLifetime
        let claim = PhoneClaim(
            id: id, uid: uid, numberHash: PhoneKeys.numberHash(number, ring: ring), countryCode: number.countryCallingCode,
            codeHash: PhoneKeys.codeHash(claimID: id, code: PhoneKeys.code(claimID: id, ring: ring), ring: ring), createdAt: now,
            codeExpiresAt: FlowContext.adding(ttl, to: now), expiresAt: FlowContext.adding(ttl, to: now),
            ownerApprovedAt: ownerApproved ? now : nil, locale: locale.flatMap(FlowContext.cleanLocale))
        let admission = context.smsAdmission
        let settlement = settlement
        // Without --phone-sign-in such a caller is refused by the admission (anonymousAccount) anyway.
        let gate = caller == .identified || !context.config.phoneSignIn ? nil : context.challenges
        try context.write { (tx: Writes) in
            try gate?.admit(challengePass, domain: nil, now: now, tx: tx)
            let decision = try admission.admit(number, clientIP: clientIP, caller: caller, now: now, tx: tx)
            // A holding under an old spelling of the number is re-keyed now, so this claim's
            // settling finds its holder (and waits for its release) as it would the number's own.
            _ = try settlement.holding(of: number, tx: tx)
            // Silenced by the number's own caps, the claim is still recorded, with the answer of
            // any other (a missing claim would tell the caller); only its SMS is not sent, so its
            // code is never known and it expires.
            try tx.insertPhoneClaim(claim)
            guard decision == .send else { return }
            // Sealed until the claim is settled: the holder's notice, if the number turns out to
            // be its account's only way in, goes to it (the claim itself has only the keyed hash).
            _ = try tx.keepNumber(number, ofClaim: id)
            _ = try tx.enqueueSMS(.phoneClaim(claimID: id), recipient: number, now: now, giveUpAt: claim.codeExpiresAt)
        }
        return PhoneClaimView(claim, life: settlement.life(claim), now: now)
    }

    /// Proves the claim's number with `code`: by the holder on its own (`owner` nil) or typed into
    /// the session of the claim's account `owner`, which agrees too when `ownerAgrees` (a recent
    /// sign-in). Then, if the owner had agreed, settles.
    func proveCode(claimID: String, code: String, owner: String?, ownerAgrees: Bool = false) throws(AuthError) -> PhoneProof {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let approvalWindow = context.config.phoneApprovalWindow
        let settlement = settlement
        let budget = budget
        enum Outcome: Sendable { case proved, refused(PhoneClaimLife.CodeCheck), notOwn, limited(Int64) }
        let outcome = try context.write { (tx: Writes) -> Outcome in
            guard let claim = try tx.phoneClaim(id: claimID) else { return owner == nil ? .refused(.wrong) : .notOwn }
            if let owner, claim.uid != owner { return .notOwn }
            // The number's budget, across its claims and its sign-in codes: while it is locked
            // every code is refused unchecked, the right one included, and nothing is counted.
            let bucket = PhoneGuessBudget.bucket(numberHash: claim.numberHash, ring: ring)
            if let wait = try budget.lock(bucket: bucket, tx: tx, now: now) { return .limited(wait) }
            var life = settlement.life(claim)
            let matches = ConstantTime.equals(PhoneKeys.codeHash(claimID: claimID, code: code, ring: ring), claim.codeHash)
            let check = life.checkCode(matches: matches, proving: true, now: now)
            switch check {
            case .proved:
                // In the owner's recent session the owner agrees too (one person at one screen).
                if owner != nil, ownerAgrees, life.claim.ownerApprovedAt == nil { _ = life.approve(now: now) }
                life.extendForApproval(approvalWindow, now: now)
                try tx.updatePhoneClaim(life.claim)
                try tx.setGuessRecord(bucket: bucket, nil)
                try settlement.settle(&life, released: false, tx: tx, now: now)
                return .proved
            case .wrong:
                try tx.updatePhoneClaim(life.claim)
                try budget.countWrongGuess(bucket: bucket, tx: tx, now: now)
                return .refused(check)
            case .replayed, .holder, .locked, .expired:
                return .refused(check)
            }
        }
        switch outcome {
        case .proved:
            return PhoneProof(claimID: claimID)
        case .notOwn: throw AuthError.phoneClaimNotFound
        case .refused(let check): throw refusal(check)
        case .limited(let wait): throw budget.locked(wait)
        }
    }

    /// The answer to a code that did not prove the claim, counted by its reason.
    func refusal(_ check: PhoneClaimLife.CodeCheck) -> AuthError {
        context.metrics.refused("phone-\(check)")
        return .invalidPhoneCode
    }

    /// Account `uid`'s claims as its owner sees them, with the transfers other accounts ask for.
    func views(uid: String, tx: Reads, now: Int64) throws -> [PhoneClaimView] {
        let incoming = try tx.phoneTransfers(from: uid)
        return try tx.phoneClaims(uid: uid).map { claim in
            let asking = claim.verifiedAt == nil ? [] : incoming.filter { $0.numberHash == claim.numberHash }
            let until = asking.compactMap(\.transferDueAt).filter { $0 != PhoneClaimLife.onReleaseOnly }.min()
            let onRelease = asking.contains { $0.transferDueAt == PhoneClaimLife.onReleaseOnly }
            // The owner sees the last two digits while the claim keeps its number (until it is
            // settled): enough to tell a number someone else claimed for this account from theirs.
            return PhoneClaimView(
                claim, life: settlement.life(claim), now: now, releaseRequestedUntil: until, awaitingRelease: onRelease,
                keptNumber: try tx.keptNumber(ofClaim: claim.id))
        }
    }
}
