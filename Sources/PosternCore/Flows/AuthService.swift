import Foundation
import PosternCrypto

/// The flows, made once over one store, key ring, clock and configuration: the daemon's
/// endpoints, the CLI and the workers call the flow a request is for (`service.emailLink.send(_:)`,
/// `service.phoneOwner.add(…)`), each its own type — email-link sign-in (`EmailLinkFlow`),
/// passwords (`PasswordFlow`), links that act on an address (`AddressFlow`), the user's own
/// profile (`ProfileFlow`), sessions (`SessionFlow`), the action-request ledger (`ActionLedger`),
/// phone numbers by consent of both parties (`PhoneOwnerFlow`, `PhoneHolderFlow`,
/// `PhoneSettlement`, `PhoneOperatorTools`), sign-in by phone (`PhoneSignInFlow`), the outboxes'
/// content stages (`MailComposer`, `SMSComposer`), delivery reports (`BounceIntake`), the per-client
/// limits (`ClientLimit`), the challenge (`ChallengeGate`), operator tools (`OperatorTools`) and the OpenID Connect provider's
/// registered clients (`OIDCClientRegistry`). It forwards nothing: a new endpoint
/// touches its flow and its route. Request paths do constant work and only record; what a mail
/// says is decided later by the composers.
///
/// Every flow's method is synchronous and thread-safe; state changes run in one store transaction each.
public final class AuthService: Sendable {
    let context: FlowContext
    /// The action-request ledger: what a pasted text or a sign-in link is, read without consuming it.
    public let ledger: ActionLedger
    /// Sessions: anonymous sign-in, ID tokens, refresh and sign-out.
    public let sessions: SessionFlow
    /// Sign-in by email link (and its approval on another device).
    public let emailLink: EmailLinkFlow
    /// Passwords: sign-up, sign-in, reset and change.
    public let passwords: PasswordFlow
    /// Links that act on an address: inspect, apply, verification and change of address.
    public let addresses: AddressFlow
    /// The signed-in user's own account.
    public let profiles: ProfileFlow
    /// The mail outbox's content stage.
    public let mailComposer: MailComposer
    /// The SMS outbox's content stage (``SMSComposing``).
    public let smsComposer: SMSComposer
    /// What operators do: links, users, the outboxes and webhooks (the admin API and the CLI).
    public let operators: OperatorTools
    /// Delivery status notifications and abuse reports.
    public let bounces: BounceIntake
    /// The providers' bounce and complaint events (SES over SNS, Postmark, Standard Webhooks).
    public let deliveryEvents: DeliveryEventIntake
    /// The per-client limit of public requests (`--ip-per-minute`), in the store every daemon shares.
    public let clientLimit: ClientLimit
    /// The admin token's guess budget per client (``AdminTokenBudget``).
    public let adminTokenGuesses: ClientLimit
    /// What holds slices of counts shared in the store (the per-IP limits, the caps and the
    /// challenge's thresholds on PostgreSQL): the daemon gives back their unspent ones.
    public var leaseHolders: [any LeaseHolder] {
        [clientLimit, adminTokenGuesses] + (ledger.sharedCounts.map { [$0] } ?? [])
    }
    /// The owner's side of phone numbers: add, prove, approve, list, release, object, delete.
    public let phoneOwner: PhoneOwnerFlow
    /// The number's holder's side: start a claim for an address, prove, read or delete it by its code.
    public let phoneHolder: PhoneHolderFlow
    /// Phone transfers whose cool-off is over, moved by housekeeping.
    public let phoneSettlement: PhoneSettlement
    /// Operators' phone tools (`postern phones`).
    public let phoneOperator: PhoneOperatorTools
    /// Sign-in by phone (`--phone-sign-in`).
    public let phoneSignIn: PhoneSignInFlow
    /// The OpenID Connect provider: authorization, the hosted sign-in page, tokens, logout.
    public let oidc: OIDCFlow
    /// The OpenID Connect provider's registered clients (`postern oidc clients`, the admin API).
    public let oidcClients: OIDCClientRegistry
    /// The identity providers of `--identity-providers` (Sign in with Apple, Google, …).
    public let identityProviders: ProviderRegistry
    /// Sign-in, link and unlink with an identity provider's ID token.
    public let providerSignIn: ProviderSignInFlow
    /// The hooks that decide (`--hook-*`), with their calls' counts.
    public let hooks: SignInHooks
    /// Code requests recorded, codes consumed and codes refused.
    public let metrics: CodeMetrics
    /// SMS queued, sent and dead by country code, and the caps hit.
    public let smsMetrics: SMSMetrics
    /// The challenge of the public requests that send mail or SMS: `GET /v1/challenge`'s offer,
    /// and the check of a solution a request sent (``ChallengeGate``).
    public let challenges: ChallengeGate
    /// The caps on public mail per recipient domain and in all, with the refusals they counted.
    public let mailCaps: MailCaps
    /// Whether the `then:` variants (``EmailLinkFlow/send(_:then:)``,
    /// ``PasswordFlow/requestReset(email:continueURL:locale:challengePass:then:)``) answer from the writer's
    /// commit without blocking the caller: the HTTP server may then call them from its polling
    /// threads instead of a thread that waits.
    public let answersFromCommit: Bool

    /// Creates the service.
    /// - Throws: `AuthError` when the public URL or allowed hosts are unusable, or hashing fails.
    public init(
        store: any Store, keys: KeyRingCache, clock: any WallClock, config: AuthConfiguration,
        hasher: PasswordHasher = .standard, logger: Logger? = nil, identityProviders: ProviderRegistry = .none,
        challengeHTTP: (any ProviderHTTP)? = nil, deliveryEventSources: DeliveryEventSources = .none, hookHTTP: (any HookHTTP)? = nil
    ) throws(AuthError) {
        self.identityProviders = identityProviders
        context = try FlowContext(
            store: store, keys: keys, clock: clock, config: config, hasher: hasher, metrics: CodeMetrics(), logger: logger,
            challengeHTTP: challengeHTTP, hookHTTP: hookHTTP)
        metrics = context.metrics
        hooks = context.hooks
        smsMetrics = context.smsMetrics
        mailCaps = context.mailCaps
        challenges = context.challenges
        answersFromCommit = context.answersFromCommit
        ledger = ActionLedger(context: context)
        sessions = SessionFlow(context: context)
        emailLink = EmailLinkFlow(context: context, ledger: ledger, sessions: sessions)
        passwords = try PasswordFlow(context: context, ledger: ledger, sessions: sessions)
        addresses = AddressFlow(context: context, ledger: ledger, sessions: sessions)
        profiles = ProfileFlow(context: context, sessions: sessions)
        mailComposer = MailComposer(context: context, ledger: ledger)
        operators = OperatorTools(context: context, ledger: ledger)
        bounces = BounceIntake(context: context)
        deliveryEvents = DeliveryEventIntake(context: context, sources: deliveryEventSources)
        clientLimit = ClientLimit(context: context, allowed: config.ipPerMinute)
        adminTokenGuesses = ClientLimit(
            context: context, allowed: config.adminTokenGuesses, window: AdminTokenBudget.windowSeconds * 1000,
            label: "postern-admin-token")
        phoneSettlement = PhoneSettlement(context: context)
        let claiming = PhoneClaiming(context: context, settlement: phoneSettlement)
        phoneOwner = PhoneOwnerFlow(context: context, sessions: sessions, claiming: claiming)
        phoneHolder = PhoneHolderFlow(context: context, sessions: sessions, claiming: claiming)
        phoneOperator = PhoneOperatorTools(context: context, claiming: claiming)
        phoneSignIn = PhoneSignInFlow(context: context, sessions: sessions, settlement: phoneSettlement)
        providerSignIn = ProviderSignInFlow(context: context, sessions: sessions, registry: identityProviders)
        smsComposer = SMSComposer(claims: PhoneClaimSMS(context: context, settlement: phoneSettlement), signIn: phoneSignIn)
        oidc = OIDCFlow(context: context, emailLink: emailLink, passwords: passwords, sessions: sessions, providerSignIn: providerSignIn)
        oidcClients = OIDCClientRegistry(context: context)
    }
}
