/// What the flows need to know from the settings.
public struct AuthConfiguration: Sendable {
    /// Origin of the links in mail, without a trailing slash.
    public var publicURL: String
    /// Hosts a continue URL may point to (exact match).
    public var allowedContinueHosts: [String]
    public var ttlSignIn: Int64 = 600
    public var ttlResetPassword: Int64 = 3600
    public var ttlVerifyEmail: Int64 = 259_200
    /// Lifetime of the recoverEmail link sent to the old address after a change.
    public var ttlRecoverEmail: Int64 = 7 * 86_400
    public var mailInterval: Int64 = 60
    public var mailPerHour: Int64 = 5
    /// The domains where a `+tag` is dropped from the address the per-address limits and guess
    /// budgets count on (``CanonicalAddress``; `--subaddress-domains`).
    public var subaddressDomains = Set(CanonicalAddress.defaultSubaddressDomains)
    /// The caps per recipient domain and of all public mail an hour (``MailCaps``; off unless set).
    public var mailCaps = MailCapConfiguration()
    /// The challenge on the public requests that send mail or SMS (``ChallengeGate``; off unless set).
    public var challenge = ChallengeConfiguration()
    /// Most public requests one client IP makes a minute, across every daemon (0: no limit).
    public var ipPerMinute: Int64 = 0
    /// Wrong admin tokens per client IP an hour (``AdminTokenBudget``).
    public var adminTokenGuesses: Int64 = AdminTokenBudget.defaultWrongTokens
    /// Lifetime of an ID token.
    public var idTokenLifetime: Int64 = 3600
    /// Lifetime of a refresh token.
    public var refreshTokenLifetime: Int64 = 30 * 86_400
    /// Lifetime of the OpenID Connect provider's browser session (`--oidc-session-days`).
    public var oidcSessionLifetime: Int64 = 14 * 86_400
    /// Seconds after a refresh token's exchange in which presenting it again gets the same
    /// successor instead of revoking the family (concurrent refreshes from two tabs).
    public var refreshReuseGrace: Int64 = 30
    /// How recent a sign-in sensitive operations need.
    public var recentSignInWindow: Int64 = 300
    /// Wrong 6-digit codes that kill a code.
    public var maximumWrongCodes = 5
    /// Wrong guesses an address may take (6-digit codes and passwords, each its own budget).
    public var guessBudget = GuessBudget()
    /// Whether a reset for an unknown address mails the no-account notice (off: nothing is sent).
    public var sendNoAccountMail = false
    /// Who may create an account (``SignUpPolicy``).
    public var signUp = SignUpPolicy.open
    /// How long an invitation's link creates its account (`--invitation-lifetime`).
    public var invitationLifetime: Int64 = 7 * 86_400
    /// How long a phone claim's SMS code proves the number.
    public var phoneCodeLifetime: Int64 = 600
    /// How long a claim its holder proved first waits for the owner's approval.
    public var phoneApprovalWindow: Int64 = 86_400
    /// The cool-off before a number held by another account moves without its release
    /// (`--phone-transfer-days`).
    public var phoneTransferSeconds: Int64 = 7 * 86_400
    /// Whether an SMS code can sign in (`--phone-sign-in`).
    public var phoneSignIn = false
    /// Where events are sent, and how patiently (no endpoint: no event is queued).
    public var webhooks = WebhookConfiguration()
    /// The window of the "new sign-in" notice (`--notify-new-device`: `--activity-days` in
    /// seconds): a sign-in from a device and network not seen within it is mailed; nil: off.
    public var newDeviceWindow: Int64?
    /// The VERP reverse path's base (`--bounce-address`), or nil: mail leaves from `--mail-from`.
    public var bounceAddress: BounceAddress?
    /// Who may be sent an SMS and how many (the toll-fraud caps), and the SMS retry schedule.
    public var sms = SMSConfiguration()
    /// The hooks that decide (`--hook-*`; off unless a URL is set). Their secrets are read at
    /// start by the assembly (`--hook-secret-file`).
    public var hooks = HookConfiguration()

    /// Creates a configuration.
    public init(publicURL: String, allowedContinueHosts: [String]) {
        self.publicURL = publicURL
        self.allowedContinueHosts = allowedContinueHosts
    }

    /// From the resolved settings.
    public init(_ settings: Settings) {
        self.init(publicURL: settings.publicURL, allowedContinueHosts: settings.effectiveContinueHosts)
        ttlSignIn = settings.ttlSignIn
        ttlResetPassword = settings.ttlResetPassword
        ttlVerifyEmail = settings.ttlVerifyEmail
        mailInterval = settings.mailInterval
        mailPerHour = settings.mailPerHour
        subaddressDomains = Set(settings.subaddressDomains)
        mailCaps = MailCapConfiguration(
            domainPerHour: settings.mailDomainPerHour, domainOverrides: settings.mailDomainOverrides,
            totalPerHour: settings.mailPerHourTotal)
        ipPerMinute = settings.ipPerMinute
        challenge = settings.challenge
        adminTokenGuesses = settings.adminTokenGuesses
        sendNoAccountMail = settings.sendNoAccountMail
        signUp = settings.signUp
        invitationLifetime = settings.invitationLifetime
        webhooks = settings.webhookConfiguration
        newDeviceWindow = settings.notifyNewDevice ? settings.activityDays * 86_400 : nil
        bounceAddress = settings.bounceAddress
        sms = settings.smsConfiguration
        phoneTransferSeconds = settings.phoneTransferSeconds
        oidcSessionLifetime = settings.oidcSessionDays * 86_400
        phoneCodeLifetime = settings.phoneCodeTTL
        phoneSignIn = settings.phoneSignIn
        sms.phoneSignIn = settings.phoneSignIn
        hooks = settings.hooks
    }

    /// The lifetime of a request of `purpose`.
    func lifetime(_ purpose: ActionRequest.Purpose) -> Int64 {
        switch purpose {
        case .signIn, .signUp: ttlSignIn
        case .resetPassword: ttlResetPassword
        case .verifyEmail, .changeEmail: ttlVerifyEmail
        case .recoverEmail: ttlRecoverEmail
        case .invitation: invitationLifetime
        }
    }
}
