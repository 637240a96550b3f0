import Foundation
import PosternCrypto

/// The account owner's side of phone numbers by consent of both parties (issue 17): the owner
/// asks to add a number (or approves a claim its holder started), types the code the SMS carried
/// into its own session, lists its claims, releases or objects to a transfer another account
/// asks for, and deletes a claim. The number is the account's only when both the owner and the
/// number's holder have agreed, and at most one account holds it (`phone_numbers`' key).
public final class PhoneOwnerFlow: Sendable {
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

    /// The signed-in owner (recent sign-in) asks to add `phoneNumber`: an SMS code goes to it,
    /// the claim is pending with the owner's consent. The answer is the same for every number.
    /// - Throws: `requiresRecentLogin`, `invalidPhoneNumber`, the SMS caps' refusals
    ///   (`anonymousAccount` without `--phone-sign-in` for an account with no proved address);
    ///   `challengeRequired` for such an account with it (``PhoneClaiming/open``).
    public func add(
        idToken: String, phoneNumber: String, locale: String?, clientIP: String?, challengePass: ChallengePass = .none
    ) throws(AuthError) -> PhoneClaimView {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let number = try context.parsePhoneNumber(phoneNumber)
        return try claiming.open(
            uid: account.uid, number: number, ownerApproved: true, caller: .of(account), locale: locale, clientIP: clientIP,
            challengePass: challengePass)
    }

    /// Every claim of the signed-in account, settling the transfers that are due.
    public func list(idToken: String) throws(AuthError) -> [PhoneClaimView] {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let now = context.clock.unixSeconds()
        let claiming = claiming
        return try context.write { (tx: Writes) in
            for claim in try tx.phoneClaims(uid: account.uid) + tx.phoneTransfers(from: account.uid) {
                try claiming.settlement.settle(claim, tx: tx, now: now)
            }
            return try claiming.views(uid: account.uid, tx: tx, now: now)
        }
    }

    /// The holder types the code into the owner's session (the usual case: one person). The
    /// owner agrees by it only with a recent sign-in, as ``approve(idToken:claimID:)`` asks: a
    /// thief with an old session of the owner's, who started the claim for the thief's own number
    /// (`POST /v1/phones/claims`), proves it but must still get the owner's approval.
    /// - Throws: `invalidPhoneCode` (wrong, used, expired, too many tries, or no such claim), `tooManyAttempts`
    ///   while the number's guessing budget is locked,
    ///   `phoneClaimNotFound` for a claim of another account.
    public func prove(idToken: String, claimID: String, code: String) throws(AuthError) -> PhoneProof {
        guard let session = try sessions.presented(idToken) else { throw .invalidIDToken }
        try PhoneKeys.checkCodeShape(code)
        try PhoneKeys.checkClaimID(claimID)
        return try claiming.proveCode(claimID: claimID, code: code, owner: session.account.uid, ownerAgrees: session.signedInRecently)
    }

    /// The owner approves a claim the holder proved first (recent sign-in).
    /// - Throws: `requiresRecentLogin`, `phoneClaimNotFound`, `phoneClaimState` unless it awaits approval.
    public func approve(idToken: String, claimID: String) throws(AuthError) -> PhoneProof {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let now = context.clock.unixSeconds()
        let settlement = claiming.settlement
        return try context.write { (tx: Writes) in
            var life = settlement.life(try Self.ownClaim(claimID, uid: account.uid, tx: tx))
            guard life.approve(now: now) else { throw AuthError.phoneClaimState("Only a claim its holder proved, awaiting approval, can be approved.") }
            try tx.updatePhoneClaim(life.claim)
            try settlement.settle(&life, released: false, tx: tx, now: now)
            return PhoneProof(claimID: claimID)
        }
    }

    /// The owner of a verified number releases it to the claims waiting for it (recent sign-in):
    /// the oldest one takes it now.
    /// - Throws: `requiresRecentLogin`, `phoneClaimNotFound`, `phoneClaimState` when nobody waits.
    public func release(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let now = context.clock.unixSeconds()
        let settlement = claiming.settlement
        try context.write { (tx: Writes) in
            let held = try Self.ownClaim(claimID, uid: account.uid, tx: tx)
            let waiting = try tx.phoneTransfers(from: account.uid).filter { $0.numberHash == held.numberHash && held.verifiedAt != nil }
            guard let first = waiting.first else { throw AuthError.phoneClaimState("No other account waits for this number.") }
            var life = settlement.life(first)
            try settlement.settle(&life, released: true, tx: tx, now: now)
        }
    }

    /// The owner of a verified number objects to the claims waiting for it: they end.
    /// - Throws: `phoneClaimNotFound`, `phoneClaimState` when nobody waits.
    public func object(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { (tx: Writes) in
            let held = try Self.ownClaim(claimID, uid: account.uid, tx: tx)
            let waiting = try tx.phoneTransfers(from: account.uid).filter { $0.numberHash == held.numberHash && held.verifiedAt != nil }
            guard !waiting.isEmpty else { throw AuthError.phoneClaimState("No other account waits for this number.") }
            for claim in waiting {
                _ = try tx.deletePhoneClaim(id: claim.id)
                if let uid = claim.uid { try events.record(.phoneRemoved(uid: uid, claimID: claim.id), tx: tx, now: now) }
            }
        }
    }

    /// The owner deletes a claim (pending or verified: the number is free again).
    /// - Throws: `phoneClaimNotFound`.
    public func delete(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { (tx: Writes) in
            let claim = try Self.ownClaim(claimID, uid: account.uid, tx: tx)
            guard try tx.deletePhoneClaim(id: claim.id) else { throw AuthError.phoneClaimNotFound }
            try events.record(.phoneRemoved(uid: account.uid, claimID: claim.id), tx: tx, now: now)
        }
    }

    /// The owner's claim `claimID`, or `phoneClaimNotFound` (another account's claim is not found either).
    private static func ownClaim(_ claimID: String, uid: String, tx: Reads) throws -> PhoneClaim {
        guard let claim = try tx.phoneClaim(id: claimID), claim.uid == uid else { throw AuthError.phoneClaimNotFound }
        return claim
    }
}
