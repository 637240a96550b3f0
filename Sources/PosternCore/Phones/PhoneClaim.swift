/// A claim that phone number P belongs to account U, as stored: found by its id (and its code's
/// keyed hash), never by the number. The number itself is kept only as a keyed hash (for the one
/// verified holder per number) and its country calling code (for the redacted form `+49…`).
///
/// Two parties agree: the account's owner (`ownerApprovedAt`: asked for it, or approved it, with
/// a recent sign-in) and the number's holder (`holderProvedAt`: typed the code the SMS carried).
/// Either may come first. When both have, the number is verified on U — unless another account V
/// holds it verified, then it waits for V to release it or for the cool-off (`transferDueAt`).
public struct PhoneClaim: Sendable, Hashable {
    /// Random, 16 bytes base64url: the claim's only handle.
    public var id: String
    /// The account U the number is to belong to; nil when the holder named an address without an
    /// account (the claim then answers as any other and can never be approved).
    public var uid: String?
    /// HMAC of the E.164 form under the phone key: equal for equal numbers, nothing else.
    public var numberHash: [UInt8]
    /// The number's country calling code ("49"): all the redacted form shows.
    public var countryCode: String
    /// HMAC of the claim's 6-digit code, bound to the claim id, under the phone key.
    public var codeHash: [UInt8]
    /// Seconds since 1970.
    public var createdAt: Int64
    /// Until when the code may prove the number (10 minutes after the SMS was asked for).
    public var codeExpiresAt: Int64
    /// Until when an unfinished claim lives (the code's life, or the approval's after a proof).
    public var expiresAt: Int64
    /// Wrong codes typed for this claim, on either side (the holder's and the owner's).
    public var wrongTries: Int
    /// When the account's owner agreed (asked for it, or approved it).
    public var ownerApprovedAt: Int64?
    /// When the number's holder proved it with the code.
    public var holderProvedAt: Int64?
    /// When the number became the account's (the store's `phone_numbers` row).
    public var verifiedAt: Int64?
    /// The account that held the number verified when both had agreed: it moves from there.
    public var transferFrom: String?
    /// When it moves without V's release, unless V objects first; ``PhoneClaimLife/onReleaseOnly``
    /// when it moves only on V's release (V has no other way in).
    public var transferDueAt: Int64?
    /// The language the SMS was asked in.
    public var locale: String?

    /// Creates a claim record.
    public init(
        id: String, uid: String?, numberHash: [UInt8], countryCode: String, codeHash: [UInt8], createdAt: Int64,
        codeExpiresAt: Int64, expiresAt: Int64, wrongTries: Int = 0, ownerApprovedAt: Int64? = nil,
        holderProvedAt: Int64? = nil, verifiedAt: Int64? = nil, transferFrom: String? = nil, transferDueAt: Int64? = nil,
        locale: String? = nil
    ) {
        self.id = id
        self.uid = uid
        self.numberHash = numberHash
        self.countryCode = countryCode
        self.codeHash = codeHash
        self.createdAt = createdAt
        self.codeExpiresAt = codeExpiresAt
        self.expiresAt = expiresAt
        self.wrongTries = wrongTries
        self.ownerApprovedAt = ownerApprovedAt
        self.holderProvedAt = holderProvedAt
        self.verifiedAt = verifiedAt
        self.transferFrom = transferFrom
        self.transferDueAt = transferDueAt
        self.locale = locale
    }

    /// `+49…`: the country calling code and nothing of the rest.
    public var redactedNumber: String { "+\(countryCode)…" }

    /// `+49…78` for the account's owner when the claim still keeps its number (`number`): the last
    /// two digits, so an owner asked to approve a number the holder claimed can tell it from
    /// their own (a planted claim showed `+49…` like theirs); else ``redactedNumber``.
    public func redactedNumber(keeping number: PhoneNumber?) -> String {
        guard let number else { return redactedNumber }
        return redactedNumber + String(number.e164.suffix(2))
    }
}

/// The verified holder of a number: one row per number (its primary key is the number's hash), so
/// that at most one account holds a number however many claims race for it.
public struct PhoneNumberHolder: Sendable, Hashable {
    public var numberHash: [UInt8]
    public var uid: String
    public var claimID: String
    public var verifiedAt: Int64

    public init(numberHash: [UInt8], uid: String, claimID: String, verifiedAt: Int64) {
        self.numberHash = numberHash
        self.uid = uid
        self.claimID = claimID
        self.verifiedAt = verifiedAt
    }
}

/// A claim's life as a value, under the limits (5 wrong tries, the code's 10 minutes, the
/// approval window, the transfer's cool-off): every rule about the claim's fields is here, so the
/// flow asks instead of checking fields, and the rules are tested without I/O.
public struct PhoneClaimLife: Sendable, Hashable {
    /// Where a claim is.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// The owner asked; the holder has not proved the code yet.
        case awaitingCode = "awaiting_code"
        /// The holder proved the number; the owner has not approved yet (the holder came first).
        case awaitingApproval = "awaiting_approval"
        /// Both agreed; another account holds the number until it releases it or the cool-off ends.
        case awaitingTransfer = "awaiting_transfer"
        /// The number is the account's.
        case verified
        /// Unfinished and past its life (or its code dead after too many wrong tries).
        case expired
    }

    /// The claim, as changed by the events so far.
    public private(set) var claim: PhoneClaim
    /// Wrong codes that kill the claim's code.
    public let maximumWrongTries: Int

    /// The life of `claim`.
    public init(_ claim: PhoneClaim, maximumWrongTries: Int = 5) {
        self.claim = claim
        self.maximumWrongTries = maximumWrongTries
    }

    /// Whether the owner and the holder have both agreed.
    public var bothAgreed: Bool { claim.ownerApprovedAt != nil && claim.holderProvedAt != nil }

    /// The phase at `now`.
    public func phase(now: Int64) -> Phase {
        if claim.verifiedAt != nil { return .verified }
        if bothAgreed { return .awaitingTransfer }
        if now >= claim.expiresAt { return .expired }
        if claim.holderProvedAt == nil, claim.wrongTries >= maximumWrongTries { return .expired }
        return claim.holderProvedAt == nil ? .awaitingCode : .awaitingApproval
    }

    /// What typing a code for this claim did.
    public enum CodeCheck: Sendable, Hashable {
        /// The right code, given to prove the number, and the holder had not yet: proved now.
        case proved
        /// The right code given to prove a number the holder proved already: a replay, refused.
        case replayed
        /// The right code given to read or delete the claim: the holder's key to it.
        case holder
        /// A wrong code (counted).
        case wrong
        /// Too many wrong tries: refused without looking, the right code included.
        case locked
        /// The code's 10 minutes are over before it proved anything.
        case expired
    }

    /// Whether a code may still be checked: under the wrong tries.
    public var acceptsCode: Bool { claim.wrongTries < maximumWrongTries }

    /// A code was typed at `now`; `matches` says whether it was the claim's (compared in constant
    /// time by the caller). `proving`: the code is given to prove the number (not to read or
    /// delete the claim with it). Wrong codes count on every path, and past the limit every code
    /// is refused, the right one included.
    public mutating func checkCode(matches: Bool, proving: Bool, now: Int64) -> CodeCheck {
        guard acceptsCode else { return .locked }
        guard matches else {
            claim.wrongTries = FlowMath.counting(claim.wrongTries)
            return .wrong
        }
        if claim.holderProvedAt != nil { return proving ? .replayed : .holder }
        // Before a proof the code lives 10 minutes, for every use.
        guard now < claim.codeExpiresAt, phase(now: now) == .awaitingCode else { return .expired }
        guard proving else { return .holder }
        claim.holderProvedAt = now
        return .proved
    }

    /// The holder proved the number first: the owner has `approvalWindow` seconds to approve.
    public mutating func extendForApproval(_ approvalWindow: Int64, now: Int64) {
        guard claim.holderProvedAt != nil, claim.ownerApprovedAt == nil else { return }
        claim.expiresAt = max(claim.expiresAt, now + approvalWindow)
    }

    /// The account's owner approves at `now`; false (nothing changes) unless the claim names an
    /// account and is waiting for that approval.
    public mutating func approve(now: Int64) -> Bool {
        guard claim.uid != nil, phase(now: now) == .awaitingApproval else { return false }
        claim.ownerApprovedAt = now
        return true
    }

    /// What the claim's agreement means, given who holds the number verified now.
    public enum Settlement: Sendable, Hashable {
        /// Not both agreed yet, or already verified: nothing to do.
        case nothing
        /// Free (or ours already): verify it on the claim's account.
        case verify
        /// Another account holds it: wait for its release until `dueAt` (tell its owner), or
        /// until its release alone when `dueAt` is ``PhoneClaimLife/onReleaseOnly``.
        case startTransfer(from: String, dueAt: Int64)
        /// Waiting for the release; the cool-off is not over.
        case waiting
        /// The cool-off is over without objection (or V released it): move it from `from`.
        case move(from: String)
    }

    /// The `transferDueAt` of a transfer that only the holder's release completes: no cool-off
    /// ever ends it (and housekeeping, which looks for due transfers, never finds it).
    public static let onReleaseOnly = Int64.max

    /// Whether the transfer waits for the holder's release alone.
    public var waitsForReleaseOnly: Bool { claim.transferDueAt == Self.onReleaseOnly }

    /// What to do now: `holder` holds the number verified (nil: nobody), `released` says the
    /// holder released it; `holderNeedsRelease` says the number is the holder account's only way
    /// in (no address, no password, no other number): then no cool-off moves it, only a release —
    /// an account must never lose its last way in without its own consent.
    public mutating func settle(holder: String?, released: Bool, holderNeedsRelease: Bool = false, coolOff: Int64, now: Int64) -> Settlement {
        guard bothAgreed, claim.verifiedAt == nil, let uid = claim.uid else { return .nothing }
        guard let holder, holder != uid else {
            claim.verifiedAt = now
            claim.transferFrom = nil
            claim.transferDueAt = nil
            return .verify
        }
        if claim.transferFrom != holder || claim.transferDueAt == nil {
            // A new transfer (or the number moved again meanwhile): the cool-off starts now.
            let dueAt = holderNeedsRelease ? Self.onReleaseOnly : FlowMath.adding(coolOff, to: now)
            claim.transferFrom = holder
            claim.transferDueAt = dueAt
            if released { return .move(from: holder) }
            return .startTransfer(from: holder, dueAt: dueAt)
        }
        if released { return .move(from: holder) }
        guard now >= (claim.transferDueAt ?? .max) else { return .waiting }
        guard !holderNeedsRelease else {
            // The holder lost its other ways in during the cool-off: from now on only its release
            // moves the number, and it is told so.
            claim.transferDueAt = Self.onReleaseOnly
            return .startTransfer(from: holder, dueAt: Self.onReleaseOnly)
        }
        return .move(from: holder)
    }

    /// The move happened: the claim's account holds the number from `now`.
    public mutating func moved(now: Int64) {
        claim.verifiedAt = now
        claim.transferFrom = nil
        claim.transferDueAt = nil
    }
}
