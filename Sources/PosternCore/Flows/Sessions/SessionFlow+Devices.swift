/// A user's sessions and activity (`/v1/me/sessions`, `/v1/me/activity`), and the operator's view
/// of any account's (`OperatorTools`): listed, and revoked one at a time or all but the caller's.
extension SessionFlow {
    /// The most activity entries one page holds.
    public static let activityPageLimit = 100

    /// The signed-in user's live sessions, newest first, and the public id of the caller's own
    /// (its ID token's `sid`; nil for a token issued before sessions were kept).
    /// - Throws: `AuthError.invalidIDToken`, `userDisabled`, `unavailable`.
    public func deviceSessions(idToken: String) throws(AuthError) -> (sessions: [DeviceSession], current: String?) {
        let (account, claims) = try verifyIDToken(idToken)
        let now = context.clock.unixSeconds()
        let sessions = try context.read { (tx: Reads) in try tx.deviceSessions(uid: account.uid, now: now) }
        return (sessions, claims.sessionID)
    }

    /// Revokes the signed-in user's session `id` (its refresh family; its ID tokens run out), as
    /// sign-out does. Another account's id is no different from an unknown one: nothing is revoked.
    /// - Throws: `AuthError.sessionNotFound`, `invalidIDToken`, `userDisabled`, `unavailable`.
    public func revokeSession(idToken: String, id: String) throws(AuthError) {
        let (account, _) = try verifyIDToken(idToken)
        guard try Self.revoke(sessionID: id, of: account.uid, in: context) else { throw .sessionNotFound }
    }

    /// Revokes every session of the signed-in user but the caller's own (its ID token's `sid`);
    /// returns how many.
    /// - Throws: `AuthError.invalidIDToken`, `userDisabled`, `unavailable`.
    @discardableResult
    public func revokeOtherSessions(idToken: String) throws(AuthError) -> Int {
        let (account, claims) = try verifyIDToken(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { (tx: Writes) in
            var revoked = 0
            for session in try tx.deviceSessions(uid: account.uid, now: now) where session.id != claims.sessionID {
                _ = try tx.revokeRefreshFamily(session.family)
                revoked += 1
            }
            if revoked > 0 { try events.record(.sessionRevoked(uid: account.uid, reason: "revokedOthers"), tx: tx, now: now) }
            return revoked
        }
    }

    /// Revokes session `id` of account `uid`: false, revoking nothing, when `uid` has no such session.
    /// - Throws: `AuthError.unavailable`.
    static func revoke(sessionID id: String, of uid: String, in context: FlowContext) throws(AuthError) -> Bool {
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { (tx: Writes) in
            guard let session = try tx.deviceSession(id: id), session.uid == uid else { return false }
            _ = try tx.revokeRefreshFamily(session.family)
            try events.record(.sessionRevoked(uid: uid, reason: "revoked"), tx: tx, now: now)
            return true
        }
    }

    /// The signed-in user's activity, newest first: `limit` entries (1…``activityPageLimit``)
    /// after `cursor`, and the cursor of the next page (nil on the last).
    /// - Throws: `AuthError.invalidIDToken`, `userDisabled`, `invalidArgument`, `unavailable`.
    public func activity(idToken: String, after cursor: ActivityCursor?, limit: Int) throws(AuthError) -> ActivityPage {
        let (account, _) = try verifyIDToken(idToken)
        return try Self.activity(uid: account.uid, after: cursor, limit: limit, in: context)
    }

    /// Account `uid`'s activity, as ``activity(idToken:after:limit:)`` answers it.
    /// - Throws: `AuthError.invalidArgument`, `unavailable`.
    static func activity(uid: String, after cursor: ActivityCursor?, limit: Int, in context: FlowContext) throws(AuthError) -> ActivityPage {
        guard (1...Self.activityPageLimit).contains(limit) else { throw .invalidArgument("limit must be 1 to \(Self.activityPageLimit).") }
        // One more than asked tells whether a next page exists.
        let rows = try context.read { (tx: Reads) in try tx.activity(uid: uid, after: cursor, limit: limit + 1) }
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { ActivityCursor(at: $0.at, id: $0.id) } : nil
        return ActivityPage(entries: page, next: next)
    }
}

/// A page of an account's activity, newest first, and where the next starts (nil on the last).
public struct ActivityPage: Sendable, Hashable {
    public var entries: [ActivityEntry]
    public var next: ActivityCursor?

    /// A page of `entries`, the next starting after `next`.
    public init(entries: [ActivityEntry], next: ActivityCursor?) {
        self.entries = entries
        self.next = next
    }
}
