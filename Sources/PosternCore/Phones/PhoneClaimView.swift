/// What one party sees of a claim: never the number (its redacted form `+49…`, and to the
/// account's owner the last two digits while the claim keeps its number: `+49…78`), never the code.
public struct PhoneClaimView: Sendable, Hashable {
    public var claimID: String
    /// `+49…`, or `+49…78` in the owner's list while the claim keeps its number.
    public var phoneNumber: String
    public var status: PhoneClaimLife.Phase
    public var ownerApproved: Bool
    public var holderProved: Bool
    public var createdAt: Int64
    /// Until when the claim lives unfinished (nil once verified or waiting for a transfer).
    public var expiresAt: Int64?
    public var verifiedAt: Int64?
    /// When the number moves to this claim's account unless its holder objects (awaiting_transfer).
    public var transferDueAt: Int64?
    /// For a verified number: when it moves to another account that claimed it, unless released
    /// sooner or objected to (nil: nobody asked, or it moves only on release: `awaitingRelease`).
    public var releaseRequestedUntil: Int64?
    /// The number moves only when its holder releases it, never by cool-off (it is the holding
    /// account's only way in): on the claim that waits (awaiting_transfer, `transferDueAt` nil) and
    /// on the holder's verified number another account asks for.
    public var awaitingRelease: Bool

    init(
        _ claim: PhoneClaim, life: PhoneClaimLife, now: Int64, releaseRequestedUntil: Int64? = nil, awaitingRelease: Bool = false,
        keptNumber: PhoneNumber? = nil
    ) {
        let phase = life.phase(now: now)
        claimID = claim.id
        phoneNumber = claim.redactedNumber(keeping: keptNumber)
        status = phase
        ownerApproved = claim.ownerApprovedAt != nil
        holderProved = claim.holderProvedAt != nil
        createdAt = claim.createdAt
        expiresAt = phase == .awaitingCode || phase == .awaitingApproval || phase == .expired ? claim.expiresAt : nil
        verifiedAt = claim.verifiedAt
        transferDueAt = phase == .awaitingTransfer && !life.waitsForReleaseOnly ? claim.transferDueAt : nil
        self.releaseRequestedUntil = releaseRequestedUntil
        self.awaitingRelease = awaitingRelease || (phase == .awaitingTransfer && life.waitsForReleaseOnly)
    }
}

/// The answer to a proof: the same whether the number was free or held by another account.
public struct PhoneProof: Sendable, Hashable {
    public var claimID: String
}
