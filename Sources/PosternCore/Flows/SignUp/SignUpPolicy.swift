/// Who may create an account (`--sign-up`, `--sign-up-domains`): the one decision every path that
/// would create one asks, at the moment it would create it (a link minted while sign-ups were open
/// creates nothing once they closed), and that the outbox's content stage asks before it mails a
/// sign-in or sign-up link to an address with no account. The request paths never ask: they
/// answer every address alike, so a refused sign-up is told from an accepted one by nobody but
/// the mailbox's owner. An existing account always signs in.
public struct SignUpPolicy: Sendable, Hashable {
    /// Who may sign up.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Anyone (within ``SignUpPolicy/domains``).
        case open
        /// Only an invited address signs up (`postern users invite`, `POST /v1/admin/invitations`):
        /// by its invitation's link, or by any other way (a sign-in link, the hosted page, a
        /// provider) while its invitation is open.
        case invite
        /// Nobody signs up; an invitation's own link still creates its account.
        case closed
    }

    /// Who may sign up.
    public var mode: Mode
    /// The domains whose addresses may sign up, lower-cased IDNA A-labels as ``EmailAddress/domain``
    /// keeps them; empty: any. A subdomain is not its parent's: each is listed.
    public var domains: Set<String>
    /// Whether a refused sign-up's address is mailed the "sign-ups are closed here" notice
    /// (`--sign-up-closed-notice`); off: it is mailed nothing.
    public var closedNotice: Bool

    /// Anyone may sign up: the default.
    public static let open = SignUpPolicy()

    /// Creates a policy.
    public init(mode: Mode = .open, domains: Set<String> = [], closedNotice: Bool = false) {
        self.mode = mode
        self.domains = domains
        self.closedNotice = closedNotice
    }

    /// Whether an account may be created for `address`, or given it as its first address (an
    /// anonymous account's upgrade). `invited`: by an invitation's link, which the operator made
    /// for exactly that address: it creates its account whatever the mode and the domains.
    public func allows(_ address: EmailAddress, invited: Bool = false) -> Bool {
        if invited { return true }
        return mode == .open && (domains.isEmpty || domains.contains(address.domain))
    }

    /// Whether an account without an address may be created: an anonymous one (which gains an
    /// address later only where ``allows(_:invited:)`` says so) while sign-ups are open.
    public var allowsAnonymous: Bool { mode == .open }

    /// Whether a phone sign-in may create an account: it has no address to check, so only while
    /// sign-ups are open to every domain.
    public var allowsWithoutAddress: Bool { mode == .open && domains.isEmpty }

    /// Whether `address` may sign up now, read in the caller's transaction: ``allows(_:invited:)``,
    /// where an invitation's own link (`byInvitation`) is invited, and in `invite` mode so is any
    /// way in for an address whose invitation is still open.
    func allows(_ address: EmailAddress, byInvitation: Bool, tx: any ActionRequestReader, now: Int64) throws -> Bool {
        if allows(address, invited: byInvitation) { return true }
        guard mode == .invite else { return false }
        return try !tx.openActionRequests(purpose: .invitation, address: address, now: now).isEmpty
    }

    /// The check at a point that would create an account for `address` (or give an account
    /// without one its first address): one call, in the transaction that writes the account.
    /// - Throws: `AuthError.signUpNotAllowed` unless ``allows(_:byInvitation:tx:now:)``.
    func admit(_ address: EmailAddress, byInvitation: Bool = false, tx: any ActionRequestReader, now: Int64) throws {
        guard try allows(address, byInvitation: byInvitation, tx: tx, now: now) else { throw AuthError.signUpNotAllowed }
    }

    /// The check at a point that would create an account with no address: anonymous
    /// (``allowsAnonymous``), or by phone (``allowsWithoutAddress``).
    /// - Throws: `AuthError.signUpNotAllowed`.
    func admitWithoutAddress(anonymous: Bool) throws(AuthError) {
        guard anonymous ? allowsAnonymous : allowsWithoutAddress else { throw .signUpNotAllowed }
    }

    /// Whether the outbox's content stage sends `request` (a sign-in, a sign-up's confirmation)
    /// no link: its address has no account (`holder` nil), may not sign up, and the request does
    /// not come from an account that already has an address (a change of address is no sign-up).
    func refusesMail(for request: ActionRequest, holder: Account?, asker: Account?, tx: any ActionRequestReader, now: Int64) throws -> Bool {
        guard holder == nil, request.purpose != .invitation, asker?.email == nil else { return false }
        return try !allows(request.email, byInvitation: false, tx: tx, now: now)
    }
}
