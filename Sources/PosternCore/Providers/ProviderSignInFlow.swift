import Foundation
import PosternAPI
import PosternCrypto

/// Sign in with Apple, Google or another OpenID provider (issue 46): the provider's ID token,
/// checked by the ``ProviderRegistry``, gives a session through the email link's six cases
/// (``SignInResolution``), where the identity is "the account this provider subject is linked to"
/// (`provider_identities`), as docs/providers.md describes.
///
/// An identity nobody holds joins the account of its address only when the provider says the
/// address is verified and the account proved it too; otherwise the answer is
/// `ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL` and nothing is written (pre-hijacking: a stranger's
/// unverified account with the victim's address never gains the victim's identity). A token is
/// used once: its SHA-256 goes into the replay ledger in the transaction that signs in, so a
/// refusal before it (`MIGRATION_REQUIRED`, the 409) leaves the token usable for the retry.
public final class ProviderSignInFlow: Sendable {
    /// The persisters this flow's transactions use.
    typealias Writes = any AccountWriter & SessionWriter & WebhookWriter & ProviderIdentityWriter & PhoneWriter & ActionRequestReader
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ProviderIdentityReader & PhoneReader

    let context: FlowContext
    let sessions: SessionFlow
    let registry: ProviderRegistry

    init(context: FlowContext, sessions: SessionFlow, registry: ProviderRegistry) {
        self.context = context
        self.sessions = sessions
        self.registry = registry
    }

    /// The refresh tokens' and the `user.signed_in` event's method of a provider sign-in: the
    /// account's name for the provider (`apple`, `google`, `oidc:<id>`), so that the provider's
    /// sessions can be ended alone (Apple's consent revoked, an unlink).
    static func method(_ provider: IdentityProvider) -> String { provider.accountProviderName }

    /// Signs in with `token` from provider `name` (`POST /v1/provider/sign-in`).
    /// - Throws: `PROVIDER_NOT_CONFIGURED`, `INVALID_PROVIDER_TOKEN` (every refusal of the token,
    ///   a replay included: one answer), `UNAVAILABLE` when the provider's keys cannot be had,
    ///   `ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL`, `MIGRATION_REQUIRED` (nothing used up),
    ///   `CREDENTIAL_ALREADY_IN_USE`, `REQUIRES_RECENT_LOGIN`, `PROVIDER_ALREADY_LINKED`,
    ///   `USER_DISABLED`, `INVALID_ID_TOKEN`.
    public func signIn(
        provider name: String, token: String, nonce: String?, idToken: String?, allowMigration: Bool?, displayName: String?
    ) throws(AuthError) -> LoginDescriptor {
        if let displayName { try ProfileFlow.checkDisplayName(displayName) }
        let provider = try configured(name)
        let presented = try sessions.presented(idToken)
        let identity = try check(token, provider: provider, nonce: nonce)
        let issue = try sessions.issuer()
        let outcome = try resolve(
            identity, token: token, provider: provider, presented: presented, allowMigration: allowMigration, displayName: displayName
        ) { account, tx, now, answers in try issue(account, Self.method(provider), now, nil, tx, answers) }
        guard let session = outcome.session else { throw .internalError("a provider sign-in issued no session") }
        return LoginDescriptor(
            uid: outcome.account.uid, email: outcome.account.email?.address, isNewUser: outcome.isNewUser, session: session,
            migration: outcome.migration, needsPassword: false)
    }

    /// Links the identity of `token` to the signed-in account (`POST /v1/me/providers`): the link
    /// case alone, with a recent sign-in.
    /// - Throws: `REQUIRES_RECENT_LOGIN`, `CREDENTIAL_ALREADY_IN_USE` (another account holds the
    ///   identity), `PROVIDER_ALREADY_LINKED`, and the token's refusals as for ``signIn(provider:token:nonce:idToken:allowMigration:displayName:)``.
    public func link(idToken: String, provider name: String, token: String, nonce: String?) throws(AuthError) -> UserRecord {
        let provider = try configured(name)
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let identity = try check(token, provider: provider, nonce: nonce)
        let outcome = try resolve(
            identity, token: token, provider: provider, presented: PresentedSession(account: account, signedInRecently: true),
            allowMigration: nil, displayName: nil, onlyLink: true, issue: nil)
        return UserRecord(outcome.account)
    }

    /// Unlinks the account's identity of provider `name` (`DELETE /v1/me/providers/{provider}`,
    /// recent sign-in); never the account's last way in. The sessions it signed in go on: they are
    /// the account holder's own, and this one may be among them (signing out everywhere is its own
    /// call). Apple's notifications end them (``appleNotification(_:)``): there the provider says
    /// the person withdrew.
    /// - Throws: `REQUIRES_RECENT_LOGIN`, `PROVIDER_NOT_LINKED`, `LAST_SIGN_IN_METHOD`.
    public func unlink(idToken: String, provider name: String) throws(AuthError) -> UserRecord {
        // A provider taken out of the file can still be unlinked: by its account name.
        guard let unlinked = registry.provider(named: name).map(Provider.identity) ?? Provider(rawValue: name),
            unlinked.isIdentityProvider
        else { throw .providerNotLinked }
        let accountName = unlinked.rawValue
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let (events, now) = (context.events, context.clock.unixSeconds())
        return try context.write { (tx: Writes) -> UserRecord in
            guard var current = try tx.account(uid: account.uid) else { throw AuthError.invalidIDToken }
            let identities = try tx.providerIdentities(uid: current.uid)
            guard identities.contains(where: { $0.provider == accountName }) else { throw AuthError.providerNotLinked }
            let others = identities.filter { $0.provider != accountName }
            let holdsNumber = try tx.phoneClaims(uid: current.uid).contains { $0.verifiedAt != nil }
            guard current.passwordHash != nil || (current.email != nil && current.emailVerified) || holdsNumber || !others.isEmpty else {
                throw AuthError.lastSignInMethod
            }
            _ = try tx.deleteProviderIdentity(uid: current.uid, provider: accountName)
            try events.record(.userProviderUnlinked(uid: current.uid, provider: accountName, by: "owner"), tx: tx, now: now)
            current.providers.remove(unlinked)
            try tx.updateAccount(current)
            return UserRecord(current)
        }
    }

    /// Apple's server-to-server notification (`POST /v1/provider/apple/notifications`), checked
    /// with Apple's keys: `consent-revoked` (the person stopped using Sign in with Apple for the
    /// app) and `account-delete` (the Apple ID is gone) unlink the identity and end the sessions it
    /// signed in, keeping the account and its other ways in; `email-disabled` and `email-enabled`
    /// (the private relay's forwarding) change nothing: the address stays the account's, and mail
    /// to it bounces or not as the relay decides. Applying one twice changes nothing more.
    /// - Throws: `PROVIDER_NOT_CONFIGURED` without an `apple` provider; `INVALID_PROVIDER_TOKEN`
    ///   for a payload that does not pass the checks; `UNAVAILABLE` when Apple's keys cannot be had.
    public func appleNotification(_ payload: String) throws(AuthError) -> AppleNotification {
        guard let apple = registry.providers.first(where: { $0.kind == .apple }) else { throw .providerNotConfigured }
        let notification: AppleNotification
        do {
            notification = try registry.verifyAppleNotification(payload, now: context.clock.unixSeconds())
        } catch {
            throw Self.answer(to: error, checking: "apple notification")
        }
        switch notification.kind {
        case .consentRevoked, .accountDelete: break
        case .emailDisabled, .emailEnabled, .unknown: return notification
        }
        let name = apple.accountProviderName
        let (events, now) = (context.events, context.clock.unixSeconds())
        try context.write { (tx: Writes) in
            guard let uid = try tx.deleteProviderIdentity(provider: name, subject: notification.subject) else { return }
            try events.record(.userProviderUnlinked(uid: uid, provider: name, by: "provider"), tx: tx, now: now)
            if var account = try tx.account(uid: uid) {
                account.providers.remove(.identity(apple))
                try tx.updateAccount(account)
            }
            try SessionFlow.revokeSessions(of: uid, method: name, tx: tx)
        }
        return notification
    }

    /// The provider a request names.
    /// - Throws: `PROVIDER_NOT_CONFIGURED`.
    func configured(_ name: String) throws(AuthError) -> IdentityProvider {
        guard let provider = registry.provider(named: name) else { throw .providerNotConfigured }
        return provider
    }

    /// The token checked by the registry (keys fetched when needed: outside any transaction).
    /// - Throws: `INVALID_PROVIDER_TOKEN`, `UNAVAILABLE`.
    func check(_ token: String, provider: IdentityProvider, nonce: String?) throws(AuthError) -> ProviderIdentity {
        guard token.utf8.count <= WireLimits.providerTokenMaximumLength else { throw .invalidProviderToken("\(provider.id): too long") }
        do {
            return try registry.verify(token, provider: provider, nonce: nonce, now: context.clock.unixSeconds())
        } catch {
            throw Self.answer(to: error, checking: provider.id)
        }
    }

    /// What the API answers for the registry's `error` about `what` (a provider's id, Apple's
    /// notification): every refusal `INVALID_PROVIDER_TOKEN` with its reason for the log only, an
    /// unreachable provider `UNAVAILABLE` naming it.
    static func answer(to error: ProviderCheckError, checking what: String) -> AuthError {
        switch error {
        case .refused(let refusal): .invalidProviderToken("\(what): \(refusal)")
        case .unavailable(let detail): .providerUnavailable("identity provider \(detail)")
        }
    }

    /// What a provider sign-in came to.
    struct Outcome: Sendable {
        let account: Account
        let isNewUser: Bool
        let migration: LoginDescriptor.Migration?
        let session: Session?
    }

    /// The six cases for a checked identity, in one transaction: the account found or made, the
    /// identity linked or touched, the token used up, then `issue` (the API's session; nil for the
    /// hosted page, which completes its authorization with the account).
    /// `onlyLink`: the presented session must be the one that gains the identity, and nobody signs
    /// in (`POST /v1/me/providers`).
    func resolve(
        _ identity: ProviderIdentity, token: String, provider: IdentityProvider, presented: PresentedSession?, allowMigration: Bool?,
        displayName: String?, onlyLink: Bool = false,
        issue: (@Sendable (Account, any SessionWriter, Int64, HookAnswers) throws -> Session)?
    ) throws(AuthError) -> Outcome {
        let accountName = provider.accountProviderName
        // The address the provider vouched for, when it is one Postern would mail; a provider's
        // unverified address is never given to an account.
        let address = identity.email.flatMap { try? context.parseEmail($0) }
        let verifiedAddress = identity.emailVerified ? address : nil
        let tokenHash = SHA256.hash(Array(token.utf8))
        let now = context.clock.unixSeconds()
        let events = context.events
        let signUp = context.config.signUp
        return try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> Outcome in
            let linked = try tx.providerIdentity(provider: accountName, subject: identity.subject)
            let session = try presented.flatMap { try tx.account(uid: $0.account.uid) }
            var holder = try linked.flatMap { try tx.account(uid: $0.uid) }
            if linked == nil, session?.isAnonymous ?? true, let address, let owner = try tx.account(address: address) {
                // Pre-hijacking: an identity joins the account of its address only when both
                // sides proved that address.
                guard identity.emailVerified, owner.emailVerified else { throw AuthError.accountExistsWithDifferentCredential }
                holder = owner
            }
            let resolution = SignInResolution.resolve(presented: session, holder: holder, allowMigration: allowMigration)
            if onlyLink {
                switch resolution {
                case .link, .upgradeAnonymous: break
                case .reauthenticate: throw AuthError.providerAlreadyLinked
                default: throw AuthError.providerInUse
                }
            }
            var migration: LoginDescriptor.Migration?
            var account: Account
            switch resolution {
            case .migrationRequired(let anonymousUid):
                throw AuthError.migrationRequired(anonymousUid: anonymousUid)
            case .credentialInUse:
                throw AuthError.providerInUse
            case .create:
                // By the address the provider verified (none: as a phone sign-in, no address to check).
                if let verifiedAddress { try signUp.admit(verifiedAddress, tx: tx, now: now) } else { try signUp.admitWithoutAddress(anonymous: false) }
                account = Account(uid: answers.newUID, email: verifiedAddress, emailVerified: verifiedAddress != nil, createdAt: now)
                try tx.insertAccount(account)
                try events.record(.userCreated(uid: account.uid, email: verifiedAddress), tx: tx, now: now)
            case .signIn(let uid), .reauthenticate(let uid):
                guard let found = try tx.account(uid: uid) else { throw AuthError.code(.stateChanged) }
                account = found
            case .upgradeAnonymous(let uid):
                guard var found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                // The address comes along when the provider verified it and nobody holds it (an
                // owner was found above otherwise).
                // Upgraded, the anonymous account is kept for good: checked as a sign-up by that
                // address, or as one without an address when the provider verified none.
                if let verifiedAddress {
                    try signUp.admit(verifiedAddress, tx: tx, now: now)
                    found.email = verifiedAddress
                    found.emailVerified = true
                } else {
                    try signUp.admitWithoutAddress(anonymous: false)
                }
                account = found
                try events.record(.userAnonymousUpgraded(uid: uid, email: found.email), tx: tx, now: now)
            case .link(let uid):
                // As adding an address or a number: an old stolen session must not plant its
                // thief's identity on the account.
                guard presented?.signedInRecently == true else { throw AuthError.requiresRecentLogin }
                guard let found = try tx.account(uid: uid) else { throw AuthError.invalidIDToken }
                // An account whose address nobody proved may be a stranger's trap for the address's
                // owner: no identity joins it until the address is proved.
                guard found.email == nil || found.emailVerified else { throw AuthError.accountExistsWithDifferentCredential }
                account = found
            case .migrate(let from, let to, let moveData):
                (account, migration) = try SignInResolution.migrate(from: from, to: to, moveData: moveData, tx: tx, events: events, now: now)
            }
            if account.disabled { throw AuthError.userDisabled }
            if !onlyLink {
                try answers.admit(HookSubject(
                    uid: account.uid, email: account.email?.address, method: Self.method(provider), isNewUser: resolution.isNewUser))
            }
            if linked == nil {
                if try tx.providerIdentities(uid: account.uid).contains(where: { $0.provider == accountName }) {
                    throw AuthError.providerAlreadyLinked
                }
                let link = ProviderIdentityLink(
                    provider: accountName, subject: identity.subject, uid: account.uid, email: address,
                    emailVerified: identity.emailVerified, createdAt: now, lastUsedAt: now)
                // Another sign-in linked it since it was read: nothing lands, try again.
                guard try tx.insertProviderIdentity(link) else { throw AuthError.code(.stateChanged) }
                try events.record(.userProviderLinked(uid: account.uid, provider: accountName), tx: tx, now: now)
            } else {
                try tx.touchProviderIdentity(provider: accountName, subject: identity.subject, email: address, emailVerified: identity.emailVerified, at: now)
            }
            // Used once: written last, so that every refusal above leaves the token for a retry.
            guard try tx.useProviderToken(hash: tokenHash, expiresAt: max(identity.expiresAt, now) + ProviderTokenVerifier.skew) else {
                throw AuthError.invalidProviderToken("\(provider.id): replayed")
            }
            account.providers.insert(.identity(provider))
            if let displayName, !displayName.isEmpty, account.displayName == nil { account.displayName = displayName }
            if !onlyLink { account.lastSignInAt = now }
            try tx.updateAccount(account)
            if !onlyLink { try events.record(.userSignedIn(uid: account.uid, method: Self.method(provider)), tx: tx, now: now) }
            let issued = try issue.map { issue in try issue(account, tx, now, answers) }
            return Outcome(account: account, isNewUser: resolution.isNewUser, migration: migration, session: issued)
        }
    }
}
