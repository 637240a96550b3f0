import Foundation
import PosternCrypto

/// Where a claim both parties agreed to ends up, in one place: a free number is verified, a held
/// one starts a transfer from its holder (its owner told by mail, or by SMS when the number is
/// the account's only way in) and moves once released or past the cool-off. The owner's, the
/// holder's and phone sign-in's flows all settle through it; housekeeping moves the due ones.
public final class PhoneSettlement: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & SessionWriter & PhoneWriter & OutboxWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & SessionReader & PhoneReader & OutboxReader & WebhookReader

    let context: FlowContext

    init(context: FlowContext) {
        self.context = context
    }

    /// Settles up to `limit` transfers whose cool-off is over (the daemon's housekeeping calls it
    /// each round): the number moves then, not at the next look at the claims, so the account it
    /// leaves loses it (and the sessions that signed in with it) on time, and `phone.*` events go
    /// out on time. Each claim in a write of its own: one that fails (logged without values by the
    /// caller's count) keeps no other from moving. Returns how many numbers moved and how many
    /// claims could not be settled.
    /// - Throws: `AuthError.unavailable` when the due claims cannot be read.
    public func settleDueTransfers(limit: Int = 100) throws(AuthError) -> (moved: Int, failed: Int) {
        let now = context.clock.unixSeconds()
        let due = try context.read { (tx: Reads) in try tx.phoneTransfersDue(by: now, limit: limit) }
        var moved = 0, failed = 0
        for claim in due {
            do {
                let verified = try context.write { (tx: Writes) -> Bool in
                    // Read again in the write: the claim may have moved or ended since.
                    guard let current = try tx.phoneClaim(id: claim.id) else { return false }
                    return try self.settle(current, tx: tx, now: now)
                }
                if verified { moved += 1 }
            } catch {
                failed += 1
            }
        }
        return (moved, failed)
    }

    func life(_ claim: PhoneClaim) -> PhoneClaimLife {
        PhoneClaimLife(claim, maximumWrongTries: context.config.maximumWrongCodes)
    }

    /// Who holds `number` verified, in the caller's write: under its keyed hash, or else under
    /// the hash of an old spelling of it (``PhoneNumber/legacySpellings``: the parser before
    /// libphonenumber kept `+49 0151…` as `+490151…`), whose holding, and the claims on it, are
    /// re-keyed to the number's hash in this write — so an account verified under an old
    /// spelling keeps its number, a phone-only one its way in. The first held spelling in their
    /// order is re-keyed; a holding under the number's own hash always wins, and another
    /// account's holding of an old spelling then stays as it is (no account is merged). The
    /// holder's own holding of another spelling is the same number again, not another way in
    /// (``isOnlyWayIn(numberHash:of:tx:)`` would count it so): it is deleted, as `phone.removed`.
    func holding(of number: PhoneNumber, tx: Writes) throws -> PhoneNumberHolder? {
        let ring = context.keys.current
        let numberHash = PhoneKeys.numberHash(number, ring: ring)
        var holding = try tx.phoneNumberHolder(numberHash: numberHash)
        for spelling in number.legacySpellings {
            let legacyHash = PhoneKeys.numberHash(e164: spelling, ring: ring)
            guard let held = holding else {
                if try tx.rekeyPhoneNumber(from: legacyHash, to: numberHash) { holding = try tx.phoneNumberHolder(numberHash: numberHash) }
                continue
            }
            guard let twin = try tx.phoneNumberHolder(numberHash: legacyHash), twin.uid == held.uid else { continue }
            _ = try tx.deletePhoneClaim(id: twin.claimID)
            try context.events.record(.phoneRemoved(uid: twin.uid, claimID: twin.claimID), tx: tx, now: context.clock.unixSeconds())
        }
        return holding
    }

    /// Who holds `number` (re-keyed from an old spelling: ``holding(of:tx:)``), once a transfer of
    /// it whose cool-off is over has moved it, in the caller's transaction: phone sign-in asks this, so past the cool-off
    /// the number signs in to the account that claimed it, never again to the one it left.
    func holderSettlingTransfers(number: PhoneNumber, tx: Writes, now: Int64) throws -> PhoneNumberHolder? {
        guard let holding = try holding(of: number, tx: tx) else { return nil }
        let numberHash = holding.numberHash
        let waiting = try tx.phoneTransfers(from: holding.uid).filter { $0.numberHash == numberHash }
        guard !waiting.isEmpty else { return holding }
        for claim in waiting { try settle(claim, tx: tx, now: now) }
        return try tx.phoneNumberHolder(numberHash: numberHash)
    }

    /// Whether the number with `numberHash` is account `uid`'s only way in: no address, no
    /// password, no other number it holds. Such an account never loses it by cool-off.
    func isOnlyWayIn(numberHash: [UInt8], of uid: String, tx: Reads) throws -> Bool {
        guard let account = try tx.account(uid: uid) else { return false }
        guard account.email == nil, account.passwordHash == nil else { return false }
        return try !tx.phoneClaims(uid: uid).contains { $0.verifiedAt != nil && $0.numberHash != numberHash }
    }

    /// ``settle(_:released:tx:now:retried:)`` of `claim` as stored, not released: true when it
    /// holds its number afterwards.
    @discardableResult
    func settle(_ claim: PhoneClaim, tx: Writes, now: Int64) throws -> Bool {
        var life = life(claim)
        try settle(&life, released: false, tx: tx, now: now)
        return life.claim.verifiedAt != nil
    }

    /// Makes the claim's agreement real, in the caller's transaction: verifies a free number,
    /// starts a transfer from the account that holds it (and mails its owner), or moves it once
    /// released or past the cool-off — then the old holder loses it, and its sessions that
    /// signed in with it end.
    func settle(_ life: inout PhoneClaimLife, released: Bool, tx: Writes, now: Int64, retried: Bool = false) throws {
        guard life.bothAgreed, life.claim.verifiedAt == nil, let uid = life.claim.uid else { return }
        let holder = try tx.phoneNumberHolder(numberHash: life.claim.numberHash)
        if let holder, holder.uid == uid {
            // The account holds the number through another claim already: this one is done.
            _ = try tx.deletePhoneClaim(id: life.claim.id)
            return
        }
        let events = context.events
        let before = life
        let needsRelease = try holder.map { try self.isOnlyWayIn(numberHash: $0.numberHash, of: $0.uid, tx: tx) } ?? false
        switch life.settle(
            holder: holder?.uid, released: released, holderNeedsRelease: needsRelease, coolOff: context.config.phoneTransferSeconds, now: now)
        {
        case .nothing, .waiting:
            return
        case .verify:
            let holding = PhoneNumberHolder(numberHash: life.claim.numberHash, uid: uid, claimID: life.claim.id, verifiedAt: now)
            guard try tx.holdPhoneNumber(holding) else {
                // Another claim took the number since it was read: wait for it like any holder.
                guard !retried else { throw AuthError.unavailable("the number's holding changed while it was settled") }
                life = before
                try settle(&life, released: false, tx: tx, now: now, retried: true)
                return
            }
            try tx.updatePhoneClaim(life.claim)
            try tx.forgetNumber(ofClaim: life.claim.id)
            try events.record(.phoneVerified(uid: uid, claimID: life.claim.id), tx: tx, now: now)
        case .startTransfer(let from, let dueAt):
            try tx.updatePhoneClaim(life.claim)
            try tx.enqueue(.phoneTransferRequested(claimID: life.claim.id), recipientOf: from, now: now)
            if dueAt == PhoneClaimLife.onReleaseOnly {
                // No address to mail: the holder hears it where it signs in. Past the toll-fraud
                // gate (this goes only to a number verified on an account, once per transfer
                // its own code started), but counted as every SMS is.
                let giveUp = FlowContext.adding(context.config.sms.policy.maximumAge, to: now)
                if try tx.enqueueSMS(.phoneTransferNotice(claimID: life.claim.id), toNumberOfClaim: life.claim.id, now: now, giveUpAt: giveUp) {
                    context.smsMetrics.count(.queued, callingCode: life.claim.countryCode)
                }
            }
        case .move(let from):
            guard let holder else { return }
            _ = try tx.deletePhoneClaim(id: holder.claimID)
            guard try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: life.claim.numberHash, uid: uid, claimID: life.claim.id, verifiedAt: now))
            else { throw AuthError.unavailable("the number's holding changed during its move") }
            life.moved(now: now)
            try tx.updatePhoneClaim(life.claim)
            try tx.forgetNumber(ofClaim: life.claim.id)
            try SessionFlow.revokeSessions(of: from, method: PhoneSignInFlow.method, tx: tx)
            try events.record(.phoneRemoved(uid: from, claimID: holder.claimID), tx: tx, now: now)
            try events.record(.phoneVerified(uid: uid, claimID: life.claim.id), tx: tx, now: now)
        }
    }
}

extension OutboxWriter where Self: AccountReader {
    /// Queues a notice to the owner of account `uid`, if it has an address.
    func enqueue(_ intent: MailIntent, recipientOf uid: String, now: Int64) throws {
        guard let email = try account(uid: uid)?.email else { return }
        _ = try enqueue(intent, recipient: email, now: now, giveUpAt: now + 86_400)
    }
}
