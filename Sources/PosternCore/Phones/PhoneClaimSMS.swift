import Foundation
import PosternCrypto

/// What a claim's SMS says, decided at delivery time (the content stage, ``SMSComposer``): the
/// claim's code to its number, and the notice to a holder whose only way in another account asks for.
struct PhoneClaimSMS: Sendable {
    /// What this content stage's reads use (the compiler holds it to them).
    typealias Reads = any AccountReader & PhoneReader

    let context: FlowContext
    let settlement: PhoneSettlement

    /// What a queued SMS says now: a claim's code while the claim still waits for it (and the
    /// message goes to the claim's number), else nil (nothing to send).
    func compose(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let publicURL = context.config.publicURL
        let settlement = settlement
        switch intent {
        case .phoneClaim(let claimID):
            return try context.read { (tx: Reads) in
                guard let claim = try tx.phoneClaim(id: claimID), settlement.life(claim).phase(now: now) == .awaitingCode,
                    now < claim.codeExpiresAt, ConstantTime.equals(PhoneKeys.numberHash(recipient, ring: ring), claim.numberHash)
                else { return nil }
                let owner = try claim.uid.flatMap { try tx.account(uid: $0) }
                // The owner asked (it agreed first): the holder is told which account, before
                // typing a code that may take the number from its own account. A holder's own
                // claim names none: that would say whether the address it gave has an account.
                let named = claim.ownerApprovedAt == nil ? nil : owner
                return SMSContent(
                    kind: .claimCode, code: PhoneKeys.code(claimID: claimID, ring: ring), localePreferences: [claim.locale, owner?.locale],
                    link: "\(publicURL)/phone?claim=\(claimID)", account: named.flatMap(Self.maskedAddress),
                    accountWithoutAddress: named.map { $0.email == nil } ?? false)
            }
        case .phoneTransferNotice(let claimID):
            return try context.read { (tx: Reads) in
                guard let claim = try tx.phoneClaim(id: claimID), settlement.life(claim).waitsForReleaseOnly,
                    ConstantTime.equals(PhoneKeys.numberHash(recipient, ring: ring), claim.numberHash),
                    let asking = try claim.uid.flatMap({ try tx.account(uid: $0) })
                else { return nil }
                let holder = try claim.transferFrom.flatMap { try tx.account(uid: $0) }
                return SMSContent(
                    kind: .transferAwaitingRelease, code: "", localePreferences: [holder?.locale],
                    account: Self.maskedAddress(asking))
            }
        case .phoneSignIn, .test:
            return nil
        }
    }

    /// The account's address as an SMS names it: masked as mail masks it, in GSM-7.
    static func maskedAddress(_ account: Account) -> String? { account.email?.masked(hiding: "***") }
}
