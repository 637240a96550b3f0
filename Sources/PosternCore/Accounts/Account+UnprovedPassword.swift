extension Account {
    /// True when the account holds a password while nobody has proved its address: whoever chose
    /// the password may not be the address's owner. Postern's own sign-up never makes one (its
    /// password applies only on the device that proves the mailbox); an export from a service
    /// that did not verify does (Firebase-style pre-hijacking: the attacker signs up with the
    /// victim's address first and keeps the password after the victim arrives).
    public var hasUnprovedPassword: Bool { passwordHash != nil && !emailVerified }

    /// Forgets an unproved password (the hash and the `password` provider); true when there was
    /// one. The import drops it at once; an account already holding one loses it, with every
    /// session, when its address is proved (``SessionFlow/endUnprovedPassword(of:tx:events:now:)``).
    public mutating func dropUnprovedPassword() -> Bool {
        guard hasUnprovedPassword else { return false }
        passwordHash = nil
        providers.remove(.password)
        return true
    }
}
