extension OperatorTools {
    /// The most suppressions one page lists.
    public static let suppressionPageLimit = 1000

    /// The suppression of `email`, or nil when mail to it is sent.
    /// - Throws: `AuthError.invalidEmail`, `unavailable`.
    public func suppression(email: String) throws(AuthError) -> Suppression? {
        let address = try context.parseEmail(email)
        return try context.read { (tx: Reads) in try tx.suppression(of: address) }
    }

    /// Suppressions newest first, `limit` of them (1…``suppressionPageLimit``) after `cursor`.
    /// - Throws: `AuthError.invalidArgument` for a limit out of range, `unavailable`.
    public func suppressions(after cursor: SuppressionCursor?, limit: Int) throws(AuthError) -> SuppressionPage {
        guard (1...Self.suppressionPageLimit).contains(limit) else {
            throw .invalidArgument("limit must be 1 to \(Self.suppressionPageLimit).")
        }
        // One more than asked tells whether a next page exists.
        let rows = try context.read { (tx: Reads) in try tx.suppressions(after: cursor, limit: limit + 1) }
        let page = Array(rows.prefix(limit))
        return SuppressionPage(suppressions: page, next: rows.count > limit ? page.last?.cursor : nil)
    }

    /// Lifts the suppression of `email` (whatever its reason): mail to it is sent again. False
    /// when it was not suppressed.
    /// - Throws: `AuthError.invalidEmail`, `unavailable`.
    public func removeSuppression(email: String) throws(AuthError) -> Bool {
        let address = try context.parseEmail(email)
        return try context.write { (tx: Writes) in try tx.unsuppress(address) }
    }
}
