extension SignInResolution {
    /// Carries out `.migrate` in the credential's transaction, for every credential (email link,
    /// phone code): the kept account, read again; the anonymous one deleted; the migration the
    /// answer reports; and the `user.migrated` event.
    /// - Throws: `AuthError.code(.stateChanged)` when the kept account is gone; what the store throws.
    static func migrate(
        from: String, to: String, moveData: Bool, tx: any AccountWriter & WebhookWriter, events: EventLedger, now: Int64
    ) throws -> (account: Account, migration: LoginDescriptor.Migration) {
        guard let found = try tx.account(uid: to) else { throw AuthError.code(.stateChanged) }
        try tx.deleteAccount(uid: from)
        try events.record(.userMigrated(fromUid: from, toUid: to), tx: tx, now: now)
        return (found, .init(fromUid: from, toUid: to, allowMigration: moveData))
    }
}
