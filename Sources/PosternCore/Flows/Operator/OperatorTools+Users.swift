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
