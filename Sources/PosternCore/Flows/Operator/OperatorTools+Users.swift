extension OperatorTools {
    /// The most users one page of the list holds.
    public static let userPageLimit = 1000

    /// Users newest first, `limit` of them (1…``userPageLimit``) after `cursor`: those `query`
    /// names (a uid, or the start of an address) or all of them.
    /// - Throws: `AuthError.invalidArgument` for a limit out of range, `unavailable`.
    public func users(matching query: UserQuery?, after cursor: UserCursor?, limit: Int) throws(AuthError) -> UserPage {
        guard (1...Self.userPageLimit).contains(limit) else { throw .invalidArgument("limit must be 1 to \(Self.userPageLimit).") }
        // One more than asked tells whether a next page exists.
        let rows = try context.read { (tx: Reads) in try tx.accounts(newestFirstAfter: cursor, matching: query, limit: limit + 1) }
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { UserCursor(createdAt: $0.createdAt, uid: $0.uid) } : nil
        return UserPage(users: page.map(UserRecord.init), next: next)
    }
}

/// An account's sessions and activity, as its owner sees them (`/v1/me/sessions`, `/v1/me/activity`).
extension OperatorTools {
    /// Account `uid`'s live sessions, newest first.
    /// - Throws: `AuthError.userNotFound`, `unavailable`.
    public func sessions(uid: String) throws(AuthError) -> [DeviceSession] {
        let now = context.clock.unixSeconds()
        return try context.read { (tx: Reads) in
            guard try tx.account(uid: uid) != nil else { throw AuthError.userNotFound }
            return try tx.deviceSessions(uid: uid, now: now)
        }
    }

    /// Revokes session `id` of account `uid` (its refresh family), as its owner would.
    /// - Throws: `AuthError.sessionNotFound` (also for another account's session), `unavailable`.
    public func revokeSession(uid: String, id: String) throws(AuthError) {
        guard try SessionFlow.revoke(sessionID: id, of: uid, in: context) else { throw .sessionNotFound }
    }

    /// Account `uid`'s activity, newest first (``SessionFlow/activity(idToken:after:limit:)``).
    /// - Throws: `AuthError.userNotFound`, `invalidArgument`, `unavailable`.
    public func activity(uid: String, after cursor: ActivityCursor?, limit: Int) throws(AuthError) -> ActivityPage {
        guard try context.read({ (tx: Reads) in try tx.account(uid: uid) }) != nil else { throw .userNotFound }
        return try SessionFlow.activity(uid: uid, after: cursor, limit: limit, in: context)
    }
}
