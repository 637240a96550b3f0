/// The accounts' activity persister (`account_activity`): what happened to each account, newest
/// first, kept `--activity-days`.
public protocol ActivityReader {
    /// At most `limit` entries of account `uid`, newest first, after `cursor` (from the newest when nil).
    func activity(uid: String, after cursor: ActivityCursor?, limit: Int) throws -> [ActivityEntry]
    /// Whether account `uid` has a sign-in entry at or after `since` from `origin` (its device
    /// name and network, nil matching nil), or from anywhere when `origin` is nil: the new-device
    /// notice asks before it records the sign-in.
    func hasSignIn(uid: String, since: Int64, from origin: SessionOrigin?) throws -> Bool
}

/// Activity changes. The events ledger records them with the account events (`events.record`).
public protocol ActivityWriter: ActivityReader {
    /// Appends an entry (its `id` is assigned).
    func recordActivity(_ entry: ActivityEntry) throws
    /// Forgets at most `limit` entries at or before `horizon`; returns how many.
    func pruneActivity(olderThan horizon: Int64, limit: Int) throws -> Int
}
