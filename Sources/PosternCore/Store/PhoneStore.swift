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
    /// Who holds the number with this keyed hash verified, if anyone.
    func phoneNumberHolder(numberHash: [UInt8]) throws -> PhoneNumberHolder?
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
    /// Forgets at most `limit` unfinished claims (neither verified nor awaiting a transfer) whose
    /// life ended at or before `horizon`; returns how many.
    func prunePhoneClaims(expiredBy horizon: Int64, limit: Int) throws -> Int
}
