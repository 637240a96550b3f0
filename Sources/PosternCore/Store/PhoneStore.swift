/// Phone-claim reads, part of every `StoreReader`. A claim is found by its id; a number only by
/// its keyed hash, and only to learn who holds it verified — never to find a claim to act on
/// (looking pending changes up by number verified numbers on the wrong account elsewhere:
/// supabase/auth#2430).
public protocol PhoneReader {
    /// The claim `id`, with `verifiedAt` set when it holds its number.
    func phoneClaim(id: String) throws -> PhoneClaim?
    /// Every claim of account `uid` (pending and verified), oldest first.
    func phoneClaims(uid: String) throws -> [PhoneClaim]
    /// The claims waiting for account `uid` to release a number it holds (`transferFrom`), oldest first.
    func phoneTransfers(from uid: String) throws -> [PhoneClaim]
    /// At most `limit` claims waiting for a number's release whose cool-off ended by `now`
    /// (`transferDueAt <= now`), the longest due first: what housekeeping settles.
    func phoneTransfersDue(by now: Int64, limit: Int) throws -> [PhoneClaim]
    /// Who holds the number with this keyed hash verified, if anyone.
    func phoneNumberHolder(numberHash: [UInt8]) throws -> PhoneNumberHolder?
    /// The number the claim `id` keeps sealed (``PhoneWriter/keepNumber(_:ofClaim:)``), opened; nil
    /// when it keeps none (settled, or from before claims kept one) or this store was opened
    /// without the master key.
    func keptNumber(ofClaim id: String) throws -> PhoneNumber?
    /// The phone sign-in request `requestID`, if it is still the number's newest (the SMS composer's look-up).
    func phoneSignIn(requestID: String) throws -> PhoneSignInCode?
}

/// Phone-claim changes, part of every `StoreWriter`.
public protocol PhoneWriter: PhoneReader {
    /// Adds a claim. Throws `StoreError.duplicate` for a taken id.
    func insertPhoneClaim(_ claim: PhoneClaim) throws
    /// Replaces a claim's state (not its verified holding: see `holdPhoneNumber`). Throws `notFound`.
    func updatePhoneClaim(_ claim: PhoneClaim) throws
    /// Deletes a claim and, if it held its number, the holding; false when there was none.
    func deletePhoneClaim(id: String) throws -> Bool
    /// Makes `holder` the verified holder of its number; false when another claim holds it (the
    /// unique key decides between concurrent writers: exactly one gets true).
    func holdPhoneNumber(_ holder: PhoneNumberHolder) throws -> Bool
    /// Re-keys a number verified under an old spelling's keyed hash (``PhoneNumber/legacySpellings``):
    /// the holding under `legacyHash` moves to `numberHash`, and every claim of `legacyHash` (the
    /// holding's own and any open on it) with it, in this write. False, and nothing changed, when
    /// `legacyHash` is not held or `numberHash` is (a number held in both spellings by two
    /// accounts keeps both holdings: the canonical one is the number's).
    func rekeyPhoneNumber(from legacyHash: [UInt8], to numberHash: [UInt8]) throws -> Bool
    /// Keeps `number`, sealed (as the SMS outbox seals a recipient), with the claim `id` until
    /// ``forgetNumber(ofClaim:)``; false when there is no such claim.
    /// Throws `StoreError.unavailable` for a store opened without the master key.
    func keepNumber(_ number: PhoneNumber, ofClaim id: String) throws -> Bool
    /// Erases the sealed number of the claim `id` (it is settled: nothing more goes to it).
    func forgetNumber(ofClaim id: String) throws
    /// Queues an SMS to the number the claim `id` keeps (`keepNumber`), copied sealed as it is;
    /// false when the claim keeps none (nothing queued).
    func enqueueSMS(_ intent: SMSIntent, toNumberOfClaim id: String, now: Int64, giveUpAt: Int64) throws -> Bool
    /// Forgets at most `limit` unfinished claims (neither verified nor awaiting a transfer) whose
    /// life ended at or before `horizon`; returns how many.
    func prunePhoneClaims(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Records a phone sign-in request, replacing any earlier one of the same number (its code
    /// is dead from now on: a newer code supersedes the older). Throws `duplicate` for a taken request id.
    func putPhoneSignIn(_ code: PhoneSignInCode) throws
    /// Counts one try against the number's sign-in request and returns it as counted; nil when the
    /// number has none or its `maximumTries` are spent (nothing counted). The count is one
    /// statement under the row's lock, so concurrent tries never get past the limit.
    func takePhoneSignInTry(numberHash: [UInt8], maximumTries: Int) throws -> PhoneSignInCode?
    /// Deletes the sign-in request `requestID` (its code is used); false when it was gone already
    /// (exactly one concurrent caller gets true).
    func deletePhoneSignIn(requestID: String) throws -> Bool
    /// Forgets at most `limit` sign-in requests that expired at or before `horizon`; returns how many.
    func prunePhoneSignIns(expiredBy horizon: Int64, limit: Int) throws -> Int
}
