import Foundation
import PosternCrypto

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

/// Phone numbers by consent of both parties (issue 17): the account's owner asks (or approves),
/// the number's holder proves it with the code the SMS carried, in either order; the number is
/// the account's only when both have, and at most one account holds it (`phone_numbers`' key).
///
/// Claims are found by id and checked by their code's keyed hash — never looked up by number
/// (supabase/auth#2430 verified a number on the wrong user that way). Every answer before the
/// proof is the same whether another account holds the number or not.
final class PhoneFlow: Sendable {
    let context: FlowContext
    let sessions: SessionFlow

    init(context: FlowContext, sessions: SessionFlow) {
        self.context = context
        self.sessions = sessions
    }

    // MARK: keys

    /// The number's keyed hash: equal numbers, equal hashes; a copy of the database alone cannot
    /// be searched with a list of numbers.
    static func numberHash(_ number: PhoneNumber, ring: KeyRing) -> [UInt8] {
        numberHash(e164: number.e164, ring: ring)
    }

    /// The keyed hash of a number's E.164 text as stored: also of an old spelling
    /// (``PhoneNumber/legacySpellings``), which the parser no longer makes.
    static func numberHash(e164: String, ring: KeyRing) -> [UInt8] {
        ring.phoneNumbers.authenticate(Array("postern-phone-number|\(e164)".utf8))
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
    func holding(of number: PhoneNumber, tx: any StoreWriter) throws -> PhoneNumberHolder? {
        let ring = context.keys.current
        let numberHash = Self.numberHash(number, ring: ring)
        var holding = try tx.phoneNumberHolder(numberHash: numberHash)
        for spelling in number.legacySpellings {
            let legacyHash = Self.numberHash(e164: spelling, ring: ring)
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

    /// The bucket of the number's guessing budget (``GuessBudget``, the address's shape): a keyed
    /// hash of the number's keyed hash, so neither the number nor the hash the claims carry is
    /// stored with it. One budget per number for every code sent to it — phone sign-in codes and
    /// claim codes, typed by the owner or the holder — under the phone key, which never rotates.
    static func guessBucket(numberHash: [UInt8], ring: KeyRing) -> [UInt8] {
        Array(ring.phoneNumbers.authenticate(Array("postern-phone-guess-budget|".utf8) + numberHash).prefix(16))
    }

    /// The number's guessing budget as it stands in `tx`: the seconds its lock has to run, or nil
    /// when a code may be checked now.
    func guessLock(bucket: [UInt8], tx: any StoreReader, now: Int64) throws -> Int64? {
        context.config.guessBudget.retryAfter(try tx.guessRecord(bucket: bucket), now: now)
    }

    /// One wrong code against the number's budget, in the caller's write (only while unlocked:
    /// guesses into a lock are refused before they are checked, and not counted).
    func countWrongGuess(bucket: [UInt8], tx: any StoreWriter, now: Int64) throws {
        try tx.setGuessRecord(bucket: bucket, context.config.guessBudget.failing(try tx.guessRecord(bucket: bucket), now: now))
    }

    /// The claim's 6-digit code: derived from its id under the phone key, so the store keeps
    /// only its keyed hash and the SMS composer derives it again.
    static func code(claimID: String, ring: KeyRing) -> String {
        sixDigits(ring.phoneNumbers.authenticate(Array("postern-phone-claim-code|\(claimID)".utf8)))
    }

    /// Six decimal digits from a MAC's first four bytes (leading zeros kept).
    static func sixDigits(_ mac: [UInt8]) -> String {
        let value = UInt32(mac[0]) << 24 | UInt32(mac[1]) << 16 | UInt32(mac[2]) << 8 | UInt32(mac[3])
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// The keyed hash of `code` as the code of claim `claimID`: a code is bound to its claim.
    static func codeHash(claimID: String, code: String, ring: KeyRing) -> [UInt8] {
        ring.phoneNumbers.authenticate(Array("postern-phone-claim-code-hash|\(claimID)|\(code)".utf8))
    }

    /// The typed code: exactly 6 ASCII digits.
    static func checkCodeShape(_ code: String) throws(AuthError) {
        guard code.utf8.count == 6, code.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .invalidArgument("code must be the 6 digits from the SMS.")
        }
    }

    /// A claim id's shape (22 base64url characters), checked before any lookup.
    static func checkClaimID(_ id: String) throws(AuthError) {
        guard id.utf8.count == 22, Base64URL.decode(id)?.count == 16 else { throw AuthError.invalidPhoneCode }
    }

    func parseNumber(_ text: String) throws(AuthError) -> PhoneNumber {
        do {
            return try PhoneNumber.parse(text, defaultRegion: context.config.sms.defaultRegion)
        } catch {
            throw .invalidPhoneNumber(error)
        }
    }

    // MARK: the owner's side

    /// The signed-in owner (recent sign-in) asks to add `phoneNumber`: an SMS code goes to it,
    /// the claim is pending with the owner's consent. The answer is the same for every number.
    /// - Throws: `requiresRecentLogin`, `invalidPhoneNumber`, the SMS caps' refusals
    ///   (`anonymousAccount` without `--phone-sign-in` for an account with no proved address).
    func add(idToken: String, phoneNumber: String, locale: String?, clientIP: String?) throws(AuthError) -> PhoneClaimView {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let number = try parseNumber(phoneNumber)
        return try open(uid: account.uid, number: number, ownerApproved: true, caller: .of(account), locale: locale, clientIP: clientIP)
    }

    /// The number's holder writes the claim first (the seed's order): for the account of `email`,
    /// unapproved until its owner approves. The caller must be signed in to an account with a
    /// proved address or a phone (without `--phone-sign-in`: an anonymous session costs one
    /// request, so it buys no SMS; with it, anyone may be sent a code anyway). Answers alike
    /// whether or not the address has an account, and whether or not the number is held.
    /// - Throws: `invalidIDToken`, `invalidEmail`, `invalidPhoneNumber`, the SMS caps' refusals
    ///   (`anonymousAccount` for an anonymous caller without `--phone-sign-in`).
    func holderStart(idToken: String, phoneNumber: String, email: String, locale: String?, clientIP: String?) throws(AuthError)
        -> PhoneClaimView
    {
        let (caller, _) = try sessions.verifyIDToken(idToken)
        let number = try parseNumber(phoneNumber)
        let address = try context.parseEmail(email)
        let uid = try context.read { tx in try tx.account(address: address)?.uid }
        var view = try open(uid: uid, number: number, ownerApproved: false, caller: .of(caller), locale: locale, clientIP: clientIP)
        // The answer must not say whether the address has an account.
        view.ownerApproved = false
        return view
    }

    /// Records a claim and queues its SMS in one write, after the SMS caps (the number's own cool-off
    /// and hourly cap answer alike and send nothing: ``SMSAdmission/Decision/silenced``).
    private func open(
        uid: String?, number: PhoneNumber, ownerApproved: Bool, caller: SMSAdmission.Caller, locale: String?, clientIP: String?
    ) throws(AuthError)
        -> PhoneClaimView
    {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let id = try FlowContext.newID()
        let ttl = context.config.phoneCodeLifetime
        let claim = PhoneClaim(
            id: id, uid: uid, numberHash: Self.numberHash(number, ring: ring), countryCode: number.countryCallingCode,
            codeHash: Self.codeHash(claimID: id, code: Self.code(claimID: id, ring: ring), ring: ring), createdAt: now,
            codeExpiresAt: FlowContext.adding(ttl, to: now), expiresAt: FlowContext.adding(ttl, to: now),
            ownerApprovedAt: ownerApproved ? now : nil, locale: locale.flatMap(FlowContext.cleanLocale))
        let admission = context.smsAdmission
        try context.write { tx in
            let decision = try admission.admit(number, clientIP: clientIP, caller: caller, now: now, tx: tx)
            // A holding under an old spelling of the number is re-keyed now, so this claim's
            // settling finds its holder (and waits for its release) as it would the number's own.
            _ = try self.holding(of: number, tx: tx)
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
        return PhoneClaimView(claim, life: life(claim), now: now)
    }

    /// Settles up to `limit` transfers whose cool-off is over (housekeeping): the number moves
    /// then, not at the next look at the claims, so the account it leaves loses it (and the
    /// sessions that signed in with it) on time, and `phone.*` events go out on time. Each claim
    /// in a write of its own: one that fails (logged without values by the caller's count) keeps
    /// no other from moving. Returns how many numbers moved and how many claims failed.
    func settleDueTransfers(limit: Int) throws(AuthError) -> (moved: Int, failed: Int) {
        let now = context.clock.unixSeconds()
        let due = try context.read { tx in try tx.phoneTransfersDue(by: now, limit: limit) }
        var moved = 0, failed = 0
        for claim in due {
            do {
                let verified = try context.write { tx -> Bool in
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

    /// Every claim of the signed-in account, settling the transfers that are due.
    func list(idToken: String) throws(AuthError) -> [PhoneClaimView] {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let now = context.clock.unixSeconds()
        return try context.write { tx in
            for claim in try tx.phoneClaims(uid: account.uid) + tx.phoneTransfers(from: account.uid) {
                try self.settle(claim, tx: tx, now: now)
            }
            return try self.views(uid: account.uid, tx: tx, now: now)
        }
    }

    /// Who holds `number` (re-keyed from an old spelling: ``holding(of:tx:)``), once a transfer of
    /// it whose cool-off is over has moved it, in the caller's transaction: phone sign-in asks this, so past the cool-off
    /// the number signs in to the account that claimed it, never again to the one it left.
    func holderSettlingTransfers(number: PhoneNumber, tx: any StoreWriter, now: Int64) throws -> PhoneNumberHolder? {
        guard let holding = try holding(of: number, tx: tx) else { return nil }
        let numberHash = holding.numberHash
        let waiting = try tx.phoneTransfers(from: holding.uid).filter { $0.numberHash == numberHash }
        guard !waiting.isEmpty else { return holding }
        for claim in waiting { try settle(claim, tx: tx, now: now) }
        return try tx.phoneNumberHolder(numberHash: numberHash)
    }

    private func views(uid: String, tx: any StoreReader, now: Int64) throws -> [PhoneClaimView] {
        let incoming = try tx.phoneTransfers(from: uid)
        return try tx.phoneClaims(uid: uid).map { claim in
            let asking = claim.verifiedAt == nil ? [] : incoming.filter { $0.numberHash == claim.numberHash }
            let until = asking.compactMap(\.transferDueAt).filter { $0 != PhoneClaimLife.onReleaseOnly }.min()
            let onRelease = asking.contains { $0.transferDueAt == PhoneClaimLife.onReleaseOnly }
            // The owner sees the last two digits while the claim keeps its number (until it is
            // settled): enough to tell a number someone else claimed for this account from theirs.
            return PhoneClaimView(
                claim, life: life(claim), now: now, releaseRequestedUntil: until, awaitingRelease: onRelease,
                keptNumber: try tx.keptNumber(ofClaim: claim.id))
        }
    }

    /// The owner's claim `claimID`, or `phoneClaimNotFound` (another account's claim is not found either).
    private func ownClaim(_ claimID: String, uid: String, tx: any StoreReader) throws -> PhoneClaim {
        guard let claim = try tx.phoneClaim(id: claimID), claim.uid == uid else { throw AuthError.phoneClaimNotFound }
        return claim
    }

    /// The holder types the code into the owner's session (the usual case: one person). The
    /// owner agrees by it only with a recent sign-in, as ``approve(idToken:claimID:)`` asks: a
    /// thief with an old session of the owner's, who started the claim for the thief's own number
    /// (`POST /v1/phones/claims`), proves it but must still get the owner's approval.
    /// - Throws: `invalidPhoneCode` (wrong, used, expired, too many tries, or no such claim), `tooManyAttempts`
    ///   while the number's guessing budget is locked,
    ///   `phoneClaimNotFound` for a claim of another account.
    func ownerProve(idToken: String, claimID: String, code: String) throws(AuthError) -> PhoneProof {
        guard let session = try sessions.presented(idToken) else { throw .invalidIDToken }
        try Self.checkCodeShape(code)
        try Self.checkClaimID(claimID)
        return try proveCode(claimID: claimID, code: code, owner: session.account.uid, ownerAgrees: session.signedInRecently)
    }

    /// The owner approves a claim the holder proved first (recent sign-in).
    /// - Throws: `requiresRecentLogin`, `phoneClaimNotFound`, `phoneClaimState` unless it awaits approval.
    func approve(idToken: String, claimID: String) throws(AuthError) -> PhoneProof {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let now = context.clock.unixSeconds()
        return try context.write { tx in
            var life = self.life(try self.ownClaim(claimID, uid: account.uid, tx: tx))
            guard life.approve(now: now) else { throw AuthError.phoneClaimState("Only a claim its holder proved, awaiting approval, can be approved.") }
            try tx.updatePhoneClaim(life.claim)
            try self.settle(&life, released: false, tx: tx, now: now)
            return PhoneProof(claimID: claimID)
        }
    }

    /// The owner of a verified number releases it to the claims waiting for it (recent sign-in):
    /// the oldest one takes it now.
    /// - Throws: `requiresRecentLogin`, `phoneClaimNotFound`, `phoneClaimState` when nobody waits.
    func release(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let now = context.clock.unixSeconds()
        try context.write { tx in
            let held = try self.ownClaim(claimID, uid: account.uid, tx: tx)
            let waiting = try tx.phoneTransfers(from: account.uid).filter { $0.numberHash == held.numberHash && held.verifiedAt != nil }
            guard let first = waiting.first else { throw AuthError.phoneClaimState("No other account waits for this number.") }
            var life = self.life(first)
            try self.settle(&life, released: true, tx: tx, now: now)
        }
    }

    /// The owner of a verified number objects to the claims waiting for it: they end.
    /// - Throws: `phoneClaimNotFound`, `phoneClaimState` when nobody waits.
    func object(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { tx in
            let held = try self.ownClaim(claimID, uid: account.uid, tx: tx)
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
    func ownerDelete(idToken: String, claimID: String) throws(AuthError) {
        let (account, _) = try sessions.verifyIDToken(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { tx in
            let claim = try self.ownClaim(claimID, uid: account.uid, tx: tx)
            guard try tx.deletePhoneClaim(id: claim.id) else { throw AuthError.phoneClaimNotFound }
            try events.record(.phoneRemoved(uid: account.uid, claimID: claim.id), tx: tx, now: now)
        }
    }

    // MARK: operators (postern phones)

    /// Every claim of account `uid`, as its owner sees them (nothing settled: an operator only looks).
    func operatorList(uid: String) throws(AuthError) -> [PhoneClaimView] {
        let now = context.clock.unixSeconds()
        return try context.read { tx in try self.views(uid: uid, tx: tx, now: now) }
    }

    /// Removes claim `claimID` (a verified number is free again); false when there is none.
    func operatorRemove(claimID: String) throws(AuthError) -> Bool {
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { tx in
            guard let claim = try tx.phoneClaim(id: claimID), try tx.deletePhoneClaim(id: claimID) else { return false }
            if let uid = claim.uid { try events.record(.phoneRemoved(uid: uid, claimID: claimID), tx: tx, now: now) }
            return true
        }
    }

    // MARK: the holder's side (the code is the key)

    /// The holder proves the number with the code (the hosted page the SMS links to, or an app).
    /// - Throws: `invalidPhoneCode` for every failure, a missing claim included; `tooManyAttempts`
    ///   while the number's guessing budget is locked.
    func holderProve(claimID: String, code: String) throws(AuthError) -> PhoneProof {
        try Self.checkCodeShape(code)
        try Self.checkClaimID(claimID)
        return try proveCode(claimID: claimID, code: code, owner: nil)
    }

    /// The holder reads the claim its code proves.
    /// - Throws: `invalidPhoneCode` for every failure; `tooManyAttempts` while the number's budget is locked.
    func holderRead(claimID: String, code: String) throws(AuthError) -> PhoneClaimView {
        try Self.checkCodeShape(code)
        try Self.checkClaimID(claimID)
        let now = context.clock.unixSeconds()
        return try holderAccess(claimID: claimID, code: code, now: now) { life, tx in
            var life = life
            try self.settle(&life, released: false, tx: tx, now: now)
            guard let current = try tx.phoneClaim(id: claimID) else { throw AuthError.invalidPhoneCode }
            return PhoneClaimView(current, life: self.life(current), now: now)
        }
    }

    /// The holder deletes the claim its code proves (before or after the proof; a verified
    /// number is then free again).
    /// - Throws: `invalidPhoneCode` for every failure; `tooManyAttempts` while the number's budget is locked.
    func holderDelete(claimID: String, code: String) throws(AuthError) {
        try Self.checkCodeShape(code)
        try Self.checkClaimID(claimID)
        let now = context.clock.unixSeconds()
        let events = context.events
        try holderAccess(claimID: claimID, code: code, now: now) { life, tx in
            _ = try tx.deletePhoneClaim(id: claimID)
            if let uid = life.claim.uid { try events.record(.phoneRemoved(uid: uid, claimID: claimID), tx: tx, now: now) }
        }
    }

    /// Checks `code` against the claim for a read or a delete, counting a wrong one, then runs `body`.
    private func holderAccess<T: Sendable>(
        claimID: String, code: String, now: Int64, _ body: @escaping @Sendable (PhoneClaimLife, any StoreWriter) throws -> T
    ) throws(AuthError) -> T {
        let ring = context.keys.current
        let outcome = try context.write { tx -> HolderOutcome<T> in
            guard let claim = try tx.phoneClaim(id: claimID) else { return .refused(.wrong) }
            let bucket = Self.guessBucket(numberHash: claim.numberHash, ring: ring)
            if let wait = try self.guessLock(bucket: bucket, tx: tx, now: now) { return .limited(wait) }
            var life = self.life(claim)
            let matches = ConstantTime.equals(Self.codeHash(claimID: claimID, code: code, ring: ring), claim.codeHash)
            let check = life.checkCode(matches: matches, proving: false, now: now)
            guard check == .holder else {
                if check == .wrong {
                    try tx.updatePhoneClaim(life.claim)
                    try self.countWrongGuess(bucket: bucket, tx: tx, now: now)
                }
                return .refused(check)
            }
            // The code proved the number: its budget starts afresh.
            try tx.setGuessRecord(bucket: bucket, nil)
            return .done(try body(life, tx))
        }
        switch outcome {
        case .done(let value): return value
        case .refused(let check): throw refusal(check)
        case .limited(let wait): throw locked(wait)
        }
    }

    /// Proves the claim's number with `code`: by the holder on its own (`owner` nil) or typed into
    /// the session of the claim's account `owner`, which agrees too when `ownerAgrees` (a recent
    /// sign-in). Then, if the owner had agreed, settles.
    private func proveCode(claimID: String, code: String, owner: String?, ownerAgrees: Bool = false) throws(AuthError) -> PhoneProof {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let approvalWindow = context.config.phoneApprovalWindow
        enum Outcome: Sendable { case proved, refused(PhoneClaimLife.CodeCheck), notOwn, limited(Int64) }
        let outcome = try context.write { tx -> Outcome in
            guard let claim = try tx.phoneClaim(id: claimID) else { return owner == nil ? .refused(.wrong) : .notOwn }
            if let owner, claim.uid != owner { return .notOwn }
            // The number's budget, across its claims and its sign-in codes: while it is locked
            // every code is refused unchecked, the right one included, and nothing is counted.
            let bucket = Self.guessBucket(numberHash: claim.numberHash, ring: ring)
            if let wait = try self.guessLock(bucket: bucket, tx: tx, now: now) { return .limited(wait) }
            var life = self.life(claim)
            let matches = ConstantTime.equals(Self.codeHash(claimID: claimID, code: code, ring: ring), claim.codeHash)
            let check = life.checkCode(matches: matches, proving: true, now: now)
            switch check {
            case .proved:
                // In the owner's recent session the owner agrees too (one person at one screen).
                if owner != nil, ownerAgrees, life.claim.ownerApprovedAt == nil { _ = life.approve(now: now) }
                life.extendForApproval(approvalWindow, now: now)
                try tx.updatePhoneClaim(life.claim)
                try tx.setGuessRecord(bucket: bucket, nil)
                try self.settle(&life, released: false, tx: tx, now: now)
                return .proved
            case .wrong:
                try tx.updatePhoneClaim(life.claim)
                try self.countWrongGuess(bucket: bucket, tx: tx, now: now)
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
        case .limited(let wait): throw locked(wait)
        }
    }

    private func refusal(_ check: PhoneClaimLife.CodeCheck) -> AuthError {
        context.metrics.refused("phone-\(check)")
        return .invalidPhoneCode
    }

    /// The answer while the number's guessing budget is locked.
    private func locked(_ wait: Int64) -> AuthError {
        context.metrics.refused("phone-locked")
        return .tooManyAttempts(retryAfter: wait)
    }

    // MARK: the SMS content stage

    /// What a queued SMS says now: a claim's code while the claim still waits for it (and the
    /// message goes to the claim's number), else nil (nothing to send).
    func composeSMS(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let publicURL = context.config.publicURL
        switch intent {
        case .phoneClaim(let claimID):
            return try context.read { tx in
                guard let claim = try tx.phoneClaim(id: claimID), self.life(claim).phase(now: now) == .awaitingCode,
                    now < claim.codeExpiresAt, ConstantTime.equals(Self.numberHash(recipient, ring: ring), claim.numberHash)
                else { return nil }
                let owner = try claim.uid.flatMap { try tx.account(uid: $0) }
                // The owner asked (it agreed first): the holder is told which account, before
                // typing a code that may take the number from its own account. A holder's own
                // claim names none: that would say whether the address it gave has an account.
                let named = claim.ownerApprovedAt == nil ? nil : owner
                return SMSContent(
                    kind: .claimCode, code: Self.code(claimID: claimID, ring: ring), localePreferences: [claim.locale, owner?.locale],
                    link: "\(publicURL)/phone?claim=\(claimID)", account: named.flatMap(Self.maskedAddress),
                    accountWithoutAddress: named.map { $0.email == nil } ?? false)
            }
        case .phoneTransferNotice(let claimID):
            return try context.read { tx in
                guard let claim = try tx.phoneClaim(id: claimID), self.life(claim).waitsForReleaseOnly,
                    ConstantTime.equals(Self.numberHash(recipient, ring: ring), claim.numberHash),
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

    // MARK: settling

    /// Whether the number with `numberHash` is account `uid`'s only way in: no address, no
    /// password, no other number it holds. Such an account never loses it by cool-off.
    func isOnlyWayIn(numberHash: [UInt8], of uid: String, tx: any StoreReader) throws -> Bool {
        guard let account = try tx.account(uid: uid) else { return false }
        guard account.email == nil, account.passwordHash == nil else { return false }
        return try !tx.phoneClaims(uid: uid).contains { $0.verifiedAt != nil && $0.numberHash != numberHash }
    }

    func life(_ claim: PhoneClaim) -> PhoneClaimLife {
        PhoneClaimLife(claim, maximumWrongTries: context.config.maximumWrongCodes)
    }

    /// ``settle(_:released:tx:now:retried:)`` of `claim` as stored, not released: true when it
    /// holds its number afterwards.
    @discardableResult
    func settle(_ claim: PhoneClaim, tx: any StoreWriter, now: Int64) throws -> Bool {
        var life = life(claim)
        try settle(&life, released: false, tx: tx, now: now)
        return life.claim.verifiedAt != nil
    }

    /// Makes the claim's agreement real, in the caller's transaction: verifies a free number,
    /// starts a transfer from the account that holds it (and mails its owner), or moves it once
    /// released or past the cool-off — then the old holder loses it, and its sessions that
    /// signed in with it end.
    func settle(_ life: inout PhoneClaimLife, released: Bool, tx: any StoreWriter, now: Int64, retried: Bool = false) throws {
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
            try SessionFlow.revokeSessions(of: from, method: PhoneFlow.signInMethod, tx: tx)
            try events.record(.phoneRemoved(uid: from, claimID: holder.claimID), tx: tx, now: now)
            try events.record(.phoneVerified(uid: uid, claimID: life.claim.id), tx: tx, now: now)
        }
    }

    /// The sign-in method of sessions a phone code gave.
    static let signInMethod = "phone"
}

/// What a holder's read or delete came to.
private enum HolderOutcome<T: Sendable>: Sendable {
    case done(T)
    case refused(PhoneClaimLife.CodeCheck)
    case limited(Int64)
}

/// The answer to a proof: the same whether the number was free or held by another account.
public struct PhoneProof: Sendable, Hashable {
    public var claimID: String
}

extension StoreWriter {
    /// Queues a notice to the owner of account `uid`, if it has an address.
    func enqueue(_ intent: MailIntent, recipientOf uid: String, now: Int64) throws {
        guard let email = try account(uid: uid)?.email else { return }
        _ = try enqueue(intent, recipient: email, now: now, giveUpAt: now + 86_400)
    }
}
