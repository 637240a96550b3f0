/// The six cases of API.md's table: what a successful credential does, given the session
/// presented (if any) and the account that holds the credential's address (if any). Pure.
public enum SignInResolution: Sendable, Hashable {
    /// No session, no account: create one (`isNewUser`).
    case create
    /// No session, an account: sign in to it.
    case signIn(holder: String)
    /// Anonymous session, no account: the anonymous account gets the address, same uid (`isNewUser`).
    case upgradeAnonymous(uid: String)
    /// Anonymous session, an account, no `allowMigration`: refuse, consuming nothing.
    case migrationRequired(anonymousUid: String)
    /// Anonymous session, an account, `allowMigration` given: sign in to it and delete the
    /// anonymous one; `moveData` is the answer given (the app moves the data only when true).
    case migrate(from: String, to: String, moveData: Bool)
    /// A normal session, no account: the address is linked to the presented account (`isNewUser`).
    case link(uid: String)
    /// A normal session, the same account: a fresh session with a fresh `auth_time`.
    case reauthenticate(uid: String)
    /// A normal session, another account: refuse.
    case credentialInUse

    /// Decides the case. `allowMigration` nil means the caller has not asked the user yet.
    public static func resolve(presented: Account?, holder: Account?, allowMigration: Bool?) -> SignInResolution {
        switch (presented, holder) {
        case (nil, nil): .create
        case (nil, let holder?): .signIn(holder: holder.uid)
        case (let session?, nil): session.isAnonymous ? .upgradeAnonymous(uid: session.uid) : .link(uid: session.uid)
        case (let session?, let holder?):
            if session.uid == holder.uid {
                .reauthenticate(uid: session.uid)
            } else if session.isAnonymous {
                allowMigration.map { .migrate(from: session.uid, to: holder.uid, moveData: $0) }
                    ?? .migrationRequired(anonymousUid: session.uid)
            } else {
                .credentialInUse
            }
        }
    }

    /// True when the outcome changes the presented session's account or ends it in favour of
    /// another: the address given to it (`upgradeAnonymous`, `link`), its data moved (`migrate`,
    /// and `migrationRequired`, which asks for that). Only the session that asked for the
    /// credential may do these: a link forwarded by a stranger must not give a victim's account
    /// the stranger's address (the stranger then signs in with it).
    public var changesPresentedAccount: Bool {
        switch self {
        case .upgradeAnonymous, .link, .migrate, .migrationRequired: true
        case .create, .signIn, .reauthenticate, .credentialInUse: false
        }
    }

    /// True exactly when the address had no account before.
    public var isNewUser: Bool {
        switch self {
        case .create, .upgradeAnonymous, .link: true
        default: false
        }
    }
}
