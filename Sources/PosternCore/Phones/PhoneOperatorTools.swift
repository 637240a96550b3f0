import Foundation

/// What operators do with phone claims (`postern phones`, the admin API): look at an account's
/// claims and remove one. Unlike the owner's and the holder's flows these need no consent.
public final class PhoneOperatorTools: Sendable {
    /// The persisters this flow's transactions use: those of claiming a number (``PhoneClaiming``),
    /// whose steps its transactions run. Its closures are typed with these, so the compiler holds
    /// the flow to them.
    typealias Writes = PhoneClaiming.Writes
    /// What this flow's reads use.
    typealias Reads = PhoneClaiming.Reads

    let context: FlowContext
    let claiming: PhoneClaiming

    init(context: FlowContext, claiming: PhoneClaiming) {
        self.context = context
        self.claiming = claiming
    }

    /// Every claim of account `uid`, as its owner sees them (nothing settled: an operator only looks).
    /// - Throws: `AuthError.unavailable`.
    public func list(uid: String) throws(AuthError) -> [PhoneClaimView] {
        let now = context.clock.unixSeconds()
        let claiming = claiming
        return try context.read { (tx: Reads) in try claiming.views(uid: uid, tx: tx, now: now) }
    }

    /// Removes claim `claimID` (a verified number is free again); false when there is none.
    /// - Throws: `AuthError.unavailable`.
    public func remove(claimID: String) throws(AuthError) -> Bool {
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { (tx: Writes) in
            guard let claim = try tx.phoneClaim(id: claimID), try tx.deletePhoneClaim(id: claimID) else { return false }
            if let uid = claim.uid { try events.record(.phoneRemoved(uid: uid, claimID: claimID), tx: tx, now: now) }
            return true
        }
    }
}
