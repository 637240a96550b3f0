/// The signing and sealing keys' persister: the key ring's rows (``KeyRingCache`` reads them,
/// rotation and housekeeping write them).
public protocol KeyReader {
    /// All keys of `purpose`, active first.
    func keys(purpose: KeyPurpose) throws -> [KeyRecord]
}

/// Key changes.
public protocol KeyWriter: KeyReader {
    /// Adds a key.
    func insertKey(_ key: KeyRecord) throws
    /// Replaces a key's metadata (status, retiredAt, verifyUntil).
    func updateKey(_ key: KeyRecord) throws
    /// Removes keys of `purpose` whose `verifyUntil` is before `now`; returns how many.
    func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int
}
