import Foundation

/// Every setting API.md lists, resolved: a flag beats the environment, which beats the JSON file.
public struct Settings: Sendable, Equatable {
    public var listen = "127.0.0.1:8080"
    /// A SQLite file, or a PostgreSQL connection string (`postgres://…` or libpq `key=value` pairs).
    public var database = "./postern.db"
    /// The master key file; nil: beside a SQLite file (`postern.db` → `postern.key`), or
    /// `./postern.key` with PostgreSQL.
    public var masterKeyFile: String?
    /// Most connections the PostgreSQL store's pool opens (unused with SQLite).
    public var pgConnections: Int64 = 8
    /// No LISTEN/NOTIFY between daemons on PostgreSQL: each finds the others' mail by polling
    /// (for a pooler in transaction mode, which cannot hold a LISTEN).
    public var pgPollOnly = false
    public var smtpURL: String?
    public var smtpCAFile: String?
    public var smtpPasswordFile: String?
    /// The base of every message's own reverse path (VERP), so delivery reports match their message.
    public var bounceAddress: BounceAddress?
    /// The `whsec_` secrets an HTTP mail provider's POSTs are signed with (`--smtp-url https://…`).
    public var mailHTTPSecretFile: String?
    /// `--mail-from`, or nil for the app name at `no-reply@localhost` (see ``senderMailbox()``).
    public var mailFrom: String?
    /// The origin of the links in mail: `--public-url`, else `http://HOST:PORT` of `--listen`.
    public var publicURL = "http://127.0.0.1:8080"
    /// Whether ``publicURL`` was made from `--listen` because `--public-url` was not given (the
    /// daemon then warns: a link to a loopback or internal address opens only on that host).
    public var publicURLFromListen = false
    public var allowedContinueHosts: [String] = []
    public var adminToken: String?
    public var templates: String?
    public var ttlSignIn: Int64 = 600
    public var ttlResetPassword: Int64 = 3600
    public var ttlVerifyEmail: Int64 = 259_200
    public var mailInterval: Int64 = 60
    public var mailPerHour: Int64 = 5
    /// `--mail-domain-per-hour`'s cap of every domain, and its per-domain overrides (``MailCaps``).
    public var mailDomainPerHour: Int64 = MailCapConfiguration.defaultDomainPerHour
    public var mailDomainOverrides: [String: Int64] = [:]
    /// `--mail-per-hour-total`: most mails all public endpoints queue an hour (``MailCaps``).
    public var mailPerHourTotal: Int64 = MailCapConfiguration.defaultTotalPerHour
    /// `--subaddress-domains`: the domains where `user+tag@` counts as `user@` (``CanonicalAddress``).
    public var subaddressDomains: [String] = CanonicalAddress.defaultSubaddressDomains
    public var ipPerMinute: Int64 = 300
    /// Wrong admin tokens per client IP in an hour before 429 (``AdminTokenBudget``).
    public var adminTokenGuesses: Int64 = AdminTokenBudget.defaultWrongTokens
    public var workers: Int64 = 4
    public var trustProxy = false
    public var scryptLogN: Int64 = 15
    public var sendNoAccountMail = false
    /// Who may create an account (`--sign-up`, `--sign-up-domains`, `--sign-up-closed-notice`).
    public var signUp = SignUpPolicy.open
    /// Seconds an invitation's link creates its account (`--invitation-lifetime`, default 7 days).
    public var invitationLifetime: Int64 = 7 * 86_400
    /// Most connections one socket peer may hold at once (0: no cap).
    public var connectionsPerIP: Int64 = 64
    /// Seconds a connection has to deliver a whole request (headers and body) after it opens or
    /// after the previous answer.
    public var requestTimeout: Int64 = 10
    /// Days sent and dead outbox messages are kept before housekeeping deletes them.
    public var retentionDays: Int64 = 30
    /// `--retention-seconds`: the same retention in seconds, beating `retentionDays` when set (for
    /// short-lived set-ups such as `bench/soak`, where the steady state must show within an hour).
    public var retentionSeconds: Int64?
    /// Seconds an action request is kept after it expired (for a composer or an approval wait
    /// that read it a moment before, and daemons whose clocks differ a little).
    public var actionRequestGrace: Int64 = 3600
    /// Days an account's activity (`GET /v1/me/activity`) is kept before housekeeping deletes it.
    public var activityDays: Int64 = 90
    /// Whether a sign-in from a device and network the account has not signed in from within
    /// `activityDays` mails the account a "new sign-in" notice.
    public var notifyNewDevice = false
    /// Seconds between two housekeeping rounds of the daemon.
    public var housekeepingInterval: Int64 = 60

    /// Seconds sent and dead outbox messages are kept: `--retention-seconds`, else the days.
    public var outboxRetention: Int64 { retentionSeconds ?? retentionDays * 86_400 }
    /// CIDRs of the proxies whose X-Forwarded-For entries are believed (checked by the server).
    public var trustedProxies: [String] = []
    /// The private, loopback and link-local ranges outgoing HTTP (webhooks, the HTTP mail
    /// provider, SMS gateways) may reach all the same (``TargetAddressPolicy``).
    public var allowPrivateTargets: [IPNetwork] = []
    /// The policy of outgoing HTTP's addresses these settings make.
    public var targetPolicy: TargetAddressPolicy { TargetAddressPolicy(allowing: allowPrivateTargets) }
    /// Where `/metrics` is served without a token (HOST:PORT), or nil for nowhere.
    public var metricsListen: String? = "127.0.0.1:9464"
    /// The product the mails and the hosted pages name (`{{appName}}`).
    public var appName = "Postern"
    /// Where users can write for help (`{{supportEmail}}`), if anywhere; a checked address.
    public var supportEmail: String?
    /// The Apple apps that open the action links (`/.well-known/apple-app-site-association`).
    public var appleAppIDs: [AppleAppID] = []
    /// The Android apps that open the action links (`/.well-known/assetlinks.json`).
    public var androidApps: [AndroidApp] = []

    /// Where every webhook event is POSTed (http or https URLs; empty: webhooks off).
    public var webhookURLs: [String] = []
    /// The file of `whsec_…` signing secrets, one a line (several while one rotates).
    public var webhookSecretFile: String?
    /// The events the URLs of `--webhook-urls` are sent (default: every one).
    public var webhookEvents: WebhookEventFilter = .all
    /// Seconds before a failed webhook is tried again the first time; doubled after each failure.
    public var webhookRetryBase: Int64 = 5
    /// Seconds before a phone number verified on one account moves to another that both its
    /// holder and that account's owner agreed to, unless the first releases it sooner or objects
    /// (`--phone-transfer-days`, fractions allowed).
    public var phoneTransferSeconds: Int64 = 7 * 86_400
    /// How long the OpenID Connect provider's browser session lasts (`--oidc-session-days`).
    public var oidcSessionDays: Int64 = 14
    /// Seconds a phone claim's SMS code proves the number (`--phone-code-ttl`, default 600).
    public var phoneCodeTTL: Int64 = 600
    /// Whether an SMS code signs in (`--phone-sign-in`; off: the phone sign-in endpoints refuse).
    public var phoneSignIn = false
    /// Seconds one webhook POST may take, connecting included.
    public var webhookTimeout: Int64 = 10
    /// The SMS settings.
    public var sms = SMSSettings()
    /// `--identity-providers`: the JSON file of identity providers (read at start by the assembly).
    public var identityProvidersFile: String?
    /// `--provider-ca-file`: extra CAs (PEM) for the identity providers' and the CAPTCHA service's https.
    public var providerCAFile: String?
    /// The challenge (`--challenge`, `--challenge-*`, `--captcha*`); its CAPTCHA secret is read at
    /// start by the assembly from ``captchaSecretFile``.
    public var challenge = ChallengeConfiguration(mode: .whenLimited)
    /// `--captcha-secret-file`.
    public var captchaSecretFile: String?
    /// `--ses-topic-arns`: the SNS topics whose SES events `POST /v1/delivery-events/ses` takes
    /// (empty: that route is off).
    public var sesTopicARNs: [String] = []
    /// `--sns-certificate-hosts`: where SNS signing certificates may come from.
    public var snsCertificateHosts: SNSCertificateHosts = .amazon
    /// `--sns-ca-file`: extra CAs (PEM) for fetching SNS certificates (a test's loopback host).
    public var snsCAFile: String?
    /// `--postmark-webhook-credentials-file`: the `USER:PASSWORD` of Postmark's webhook URL.
    public var postmarkWebhookCredentialsFile: String?
    /// `--delivery-webhook-secret-file`: the `whsec_` secrets of a Standard Webhooks provider.
    public var deliveryWebhookSecretFile: String?
    /// `--hook-before-sign-up`, `--hook-before-sign-in`, `--hook-token-claims`: each hook's URL.
    public var hookURLs: [HookKind: String] = [:]
    /// `--hook-secret-file`: the `whsec_` secrets the hooks' calls are signed with (read at start).
    public var hookSecretFile: String?
    /// `--hook-timeout`: milliseconds one hook call may take, connecting included.
    public var hookTimeout: Int64 = HookConfiguration.defaultTimeoutMilliseconds
    /// `--hook-failure`.
    public var hookFailure: HookConfiguration.FailureMode = .closed

    /// The hooks' configuration these settings make, without its secrets (the assembly reads them).
    public var hooks: HookConfiguration {
        var hooks = HookConfiguration()
        hooks.urls = hookURLs
        hooks.timeoutMilliseconds = hookTimeout
        hooks.failure = hookFailure
        return hooks
    }

    /// The defaults.
    public init() {}

    /// The webhook endpoints and retry schedule the flows and the worker use.
    public var webhookConfiguration: WebhookConfiguration {
        var policy = WebhookConfiguration.standardPolicy
        policy = DeliveryPolicy(
            baseDelay: webhookRetryBase, maximumDelay: policy.maximumDelay, maximumAge: policy.maximumAge,
            lease: max(policy.lease, 4 * webhookTimeout))
        return WebhookConfiguration(endpoints: webhookURLs, filter: webhookEvents, policy: policy, targets: targetPolicy)
    }

    /// One setting: its flag (also its JSON key), environment variable, value placeholder and
    /// help text.
    public struct Descriptor: Sendable {
        public let flag: String
        public let environment: String
        public let help: String
        /// What the flag's value is called in `--help` (`N`, `VALUE`), or nil for a boolean,
        /// whose bare flag means true (`--trust-proxy`); `--flag=false` still turns it off.
        public let placeholder: String?
        let apply: @Sendable (inout Settings, String) throws(SettingsError) -> Void

        /// Whether the flag takes a value on the command line (every setting but a boolean).
        public var takesValue: Bool { placeholder != nil }
    }

    /// The product name and support address every mail and page shows.
    public var branding: Branding { Branding(appName: appName, supportEmail: supportEmail) }

    /// The From mailbox: `--mail-from`, else the app name at `no-reply@localhost`.
    /// - Throws: `MimeError` when `--mail-from` is not `address` or `Name <address>`.
    public func senderMailbox() throws(MimeError) -> MailMailbox {
        if let mailFrom { return try MailMailbox.parse(mailFrom) }
        return try MailMailbox(EmailAddress(checkedLocalPart: "no-reply", domain: "localhost"), displayName: appName)
    }

    /// The longest lifetime of any action code: how long a retired key must keep verifying.
    public var longestCodeLifetime: Int64 { max(ttlSignIn, ttlResetPassword, ttlVerifyEmail, invitationLifetime, 7 * 86_400) }

    /// The hosts a continue URL may point to: the allowed list, or the public URL's host.
    public var effectiveContinueHosts: [String] {
        if !allowedContinueHosts.isEmpty { return allowedContinueHosts }
        return (try? LinkPolicy(publicURL: publicURL, allowedHosts: [])).map { [$0.host] } ?? []
    }

    /// Resolves settings from `flags` (flag name without dashes → value), `environment` and the
    /// decoded JSON `file` (keys are the flag names).
    /// - Throws: `SettingsError` naming the setting, where it came from, and what to fix.
    public static func resolve(
        flags: [String: String], environment: [String: String], file: [String: String]
    ) throws(SettingsError) -> Settings {
        var settings = Settings()
        var givenPublicURL = false
        for descriptor in descriptors {
            let source: (String, String)? =
                flags[descriptor.flag].map { ("--\(descriptor.flag)", $0) }
                ?? environment[descriptor.environment].map { (descriptor.environment, $0) }
                ?? file[descriptor.flag].map { ("\"\(descriptor.flag)\" in the config file", $0) }
            guard let (origin, value) = source else { continue }
            do {
                try descriptor.apply(&settings, value)
            } catch {
                throw SettingsError("\(origin): \(error.message)")
            }
            if descriptor.flag == "public-url" { givenPublicURL = true }
        }
        if !givenPublicURL {
            guard let derived = publicURL(listeningOn: settings.listen) else {
                throw SettingsError("--listen \(settings.listen) makes no link origin; set --public-url, such as https://auth.example.com")
            }
            settings.publicURL = derived
            settings.publicURLFromListen = true
        }
        try settings.checkTargets()
        try settings.checkChallenge()
        try settings.checkHooks()
        return settings
    }

    /// A CAPTCHA needs its site key and secret, and those need a CAPTCHA.
    func checkChallenge() throws(SettingsError) {
        if let service = challenge.captcha {
            guard challenge.captchaSiteKey != nil, captchaSecretFile != nil else {
                throw SettingsError("--captcha \(service.rawValue) needs --captcha-site-key and --captcha-secret-file")
            }
        } else if challenge.captchaSiteKey != nil || captchaSecretFile != nil || challenge.captchaVerifyURL != nil || !challenge.captchaHostnames.isEmpty {
            throw SettingsError("--captcha-site-key, --captcha-secret-file, --captcha-verify-url and --captcha-hostnames need --captcha")
        }
    }

    /// A hook needs the secret its calls are signed with, and the secret needs a hook.
    func checkHooks() throws(SettingsError) {
        if hookURLs.isEmpty {
            guard hookSecretFile == nil else { throw SettingsError("--hook-secret-file needs a hook: --hook-before-sign-up, --hook-before-sign-in or --hook-token-claims") }
        } else if hookSecretFile == nil {
            throw SettingsError("--\(HookKind.allCases.first { hookURLs[$0] != nil }?.flag ?? "hook-…") needs --hook-secret-file: a file of whsec_… secrets, one a line")
        }
    }

    /// Whether `--listen` binds a loopback address only (`127.0.0.1`, `localhost`, `[::1]`):
    /// then the links made from it open where the daemon runs, as a newcomer's set-up wants.
    public var listensOnLoopbackOnly: Bool {
        guard let colon = listen.lastIndex(of: ":") else { return false }
        let host = listen[..<colon].lowercased()
        return host == "localhost" || host == "[::1]" || host == "::1" || host.hasPrefix("127.")
    }

    /// The public URL when `--public-url` is not given: `http://HOST:PORT` of the `--listen`
    /// address, so the links in mail reach the port the daemon binds; an unspecified host
    /// (`0.0.0.0`, `[::]`) becomes loopback (`127.0.0.1`, `[::1]`), since no link can open it.
    /// Nil when the result is no URL a link may have.
    public static func publicURL(listeningOn listen: String) -> String? {
        guard let colon = listen.lastIndex(of: ":"), colon != listen.startIndex else { return nil }
        var host = String(listen[..<colon])
        let port = listen[listen.index(after: colon)...]
        switch host {
        case "0.0.0.0": host = "127.0.0.1"
        case "[::]", "::": host = "[::1]"
        default: if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        }
        let url = "http://\(host):\(port)"
        guard (try? LinkPolicy(publicURL: url, allowedHosts: [])) != nil else { return nil }
        return url
    }

    /// Refuses an HTTP target of the settings whose host is a literal address the target policy
    /// refuses (`http://127.0.0.1/`, `http://0x7f000001/`), naming the setting; once every
    /// setting is read, since `--allow-private-targets` may come after them.
    /// - Throws: `SettingsError` naming the setting and the address.
    func checkTargets() throws(SettingsError) {
        let policy = targetPolicy
        if let smtpURL, smtpURL.lowercased().hasPrefix("http") { try policy.check(url: smtpURL, setting: "--smtp-url") }
        for url in webhookURLs { try policy.check(url: url, setting: "--webhook-urls") }
        switch sms.transport {
        case .json(let url): try policy.check(url: url, setting: "--sms-transport")
        case .twilio: try policy.check(url: sms.twilioBaseURL, setting: "--sms-twilio-base-url")
        case .file: break
        }
    }

    /// All settings, in the order `--help` lists them.
    public static let descriptors: [Descriptor] = [
        text("listen", "POSTERN_LISTEN", "HTTP bind address HOST:PORT (default 127.0.0.1:8080)") { s, v throws(SettingsError) in
            guard let colon = v.lastIndex(of: ":"), UInt16(v[v.index(after: colon)...]) != nil, colon != v.startIndex else {
                throw SettingsError("must be HOST:PORT, such as 127.0.0.1:8080")
            }
            s.listen = v
        },
        text("database", "POSTERN_DATABASE", "SQLite file (default ./postern.db), or PostgreSQL: postgres://user@host:5432/db or libpq key=value pairs (host=… dbname=…)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.database = v
        },
        text("master-key-file", "POSTERN_MASTER_KEY_FILE", "the 0600 file whose key seals the signing keys in the database; every daemon on one database needs the same (default: beside a SQLite file, postern.db → postern.key; ./postern.key with PostgreSQL)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.masterKeyFile = v
        },
        boolean("pg-poll-only", "POSTERN_PG_POLL_ONLY", "on PostgreSQL, find mail other daemons queued by polling every second only, without LISTEN/NOTIFY and its one extra connection (for PgBouncer and other poolers in transaction mode; default off)") { s, v in s.pgPollOnly = v },
        number("pg-connections", "POSTERN_PG_CONNECTIONS", "most connections to PostgreSQL this daemon opens (default 8; unused with SQLite)", minimum: 1, maximum: 1000) { s, v in s.pgConnections = v },
        text("smtp-url", "POSTERN_SMTP_URL", "smtp://user:pass@host:587 (STARTTLS), smtps://host:465, smtp+plain://host:25, file:DIR, or https://… for an HTTP mail provider: a signed JSON POST per message, see --mail-http-secret-file (default: file:./mail-out)") { s, v throws(SettingsError) in
            let schemes = ["smtp://", "smtps://", "smtp+plain://", "file:", "https://", "http://"]
            guard schemes.contains(where: { v.lowercased().hasPrefix($0) }), v.count > 5 else {
                throw SettingsError("must start with smtp://, smtps://, smtp+plain://, file:, https:// or http://")
            }
            s.smtpURL = v
        },
        text("smtp-ca-file", "POSTERN_SMTP_CA_FILE", "extra CA certificates (PEM) to trust for the SMTP server") { s, v in s.smtpCAFile = v },
        text("smtp-password-file", "POSTERN_SMTP_PASSWORD_FILE", "read the SMTP password from this file") { s, v in s.smtpPasswordFile = v },
        text("bounce-address", "POSTERN_BOUNCE_ADDRESS", "bounce@bounces.example.com: each message's envelope sender becomes bounce+<id>.<key>.<tag>@bounces.example.com, so a delivery report (RFC 3464) or abuse report (RFC 5965) sent back to it is matched to its message; feed them to `postern bounces take` or POST /v1/admin/bounces (default: none, mail leaves from --mail-from)") { s, v throws(SettingsError) in
            s.bounceAddress = try BounceAddress(v)
        },
        text("mail-http-secret-file", "POSTERN_MAIL_HTTP_SECRET_FILE", "file of whsec_… secrets, one a line, that sign each POST to an https:// --smtp-url in the Standard Webhooks format (webhook-id is the Message-ID: the same on every retry); any 2xx is success, 429/5xx/401/403 are retried, another 4xx makes the message dead") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.mailHTTPSecretFile = v
        },
        text("mail-from", "POSTERN_MAIL_FROM", "From header and envelope sender (default: the app name at no-reply@localhost, \"Postern <no-reply@localhost>\")") { s, v throws(SettingsError) in
            guard !v.contains(where: { $0.isNewline }), v.contains("@") else { throw SettingsError("must be an address, optionally \"Name <address>\"") }
            s.mailFrom = v
        },
        text("public-url", "POSTERN_PUBLIC_URL", "origin of the links in mail, such as https://auth.example.com (default: http://HOST:PORT of --listen, 0.0.0.0 read as 127.0.0.1, with a warning at start: set it wherever the links are opened from another host)") { s, v throws(SettingsError) in
            // The one parser of links (LinkPolicy) decides, so what starts is what the link checks accept.
            guard (try? LinkPolicy(publicURL: v, allowedHosts: [])) != nil, !v.contains("?"), !v.contains("#") else {
                throw SettingsError("must be an absolute http(s) URL such as https://auth.example.com")
            }
            s.publicURL = v.hasSuffix("/") ? String(v.dropLast()) : v
        },
        text("allowed-continue-hosts", "POSTERN_ALLOWED_CONTINUE_HOSTS", "comma-separated hosts a continueUrl may point to (default: the public URL's host)") { s, v in
            s.allowedContinueHosts = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        },
        text("admin-token", "POSTERN_ADMIN_TOKEN", "bearer token for /v1/admin/* (default: admin API disabled)") { s, v throws(SettingsError) in
            guard v.count >= 16 else { throw SettingsError("must be at least 16 characters") }
            s.adminToken = v
        },
        number("admin-token-guesses", "POSTERN_ADMIN_TOKEN_GUESSES", "wrong admin tokens one client IP may send before its admin requests get 429, refilled over an hour (default 10: then one each 6 minutes)", minimum: 1, maximum: 1_000_000) { s, v in s.adminTokenGuesses = v },
        text("templates", "POSTERN_TEMPLATES", "template directory (default: the bundled templates/)") { s, v in s.templates = v },
        number("ttl-sign-in", "POSTERN_TTL_SIGN_IN", "lifetime of sign-in links and codes in seconds (default 600)", minimum: 60, maximum: Settings.longestTTL) { s, v in s.ttlSignIn = v },
        number("ttl-reset-password", "POSTERN_TTL_RESET_PASSWORD", "lifetime of reset links in seconds (default 3600)", minimum: 60, maximum: Settings.longestTTL) { s, v in s.ttlResetPassword = v },
        number("ttl-verify-email", "POSTERN_TTL_VERIFY_EMAIL", "lifetime of verification links in seconds (default 259200)", minimum: 60, maximum: Settings.longestTTL) { s, v in s.ttlVerifyEmail = v },
        number("mail-interval", "POSTERN_MAIL_INTERVAL", "least seconds between two mails of one action to one address (default 60; 0: no limit)", minimum: 0, maximum: 86_400) { s, v in s.mailInterval = v },
        number("mail-per-hour", "POSTERN_MAIL_PER_HOUR", "most mails of one action to one address per hour (default 5; 0: no limit)", minimum: 0, maximum: 1_000_000) { s, v in s.mailPerHour = v },
        text("mail-domain-per-hour", "POSTERN_MAIL_DOMAIN_PER_HOUR", "most mails the public endpoints queue to one recipient domain per hour, counted across daemons in fixed hours (googlemail.com is gmail.com), then 429 with Retry-After for every address there; N, or N,domain=M,… to give domains their own cap (600,gmail.com=5000,example.org=0); 0: no cap (default 600: one mail each 6 seconds to one provider, far above a small site's sign-ins there, far below a bot's)") { s, v throws(SettingsError) in
            (s.mailDomainPerHour, s.mailDomainOverrides) = try MailCapConfiguration.parseDomainCaps(v)
        },
        number("mail-per-hour-total", "POSTERN_MAIL_PER_HOUR_TOTAL", "most mails all public endpoints together queue per hour, counted across daemons in fixed hours, then 429 with Retry-After; the admin API's mail is not counted (default 5000; 0: no cap)", minimum: 0, maximum: 1_000_000_000) { s, v in s.mailPerHourTotal = v },
        text("subaddress-domains", "POSTERN_SUBADDRESS_DOMAINS", "comma-separated domains where user+tag@ reaches user@, so the per-address limits and guess budgets count every +tag as the address without it; mail still goes to the address as typed; a list replaces the default, none turns it off (gmail.com and googlemail.com always count as one, without dots or +tags) (default: \(CanonicalAddress.defaultSubaddressDomains.joined(separator: ",")))") { s, v throws(SettingsError) in
            s.subaddressDomains = try subaddressDomains(v)
        },
        number("ip-per-minute", "POSTERN_IP_PER_MINUTE", "most requests per client IP per minute (default 300; 0: no limit)", minimum: 0, maximum: 1_000_000_000) { s, v in s.ipPerMinute = v },
        number("workers", "POSTERN_WORKERS", "concurrent SMTP deliveries (default 4; 0: this daemon delivers no mail and only answers requests, for a PostgreSQL database where other daemons deliver)", minimum: 0, maximum: 256) { s, v in s.workers = v },
        number("scrypt-log-n", "POSTERN_SCRYPT_LOG_N", "scrypt cost of new password hashes, log2 N with r=8 p=1 (default 15: 32 MiB; old hashes still verify; also the most an imported hash may cost)", minimum: 10, maximum: 20) { s, v in s.scryptLogN = v },
        boolean("trust-proxy", "POSTERN_TRUST_PROXY", "the socket peer is a proxy you run: take the client IP from the rightmost X-Forwarded-For entry (see --trusted-proxies for several hops)") { s, v in s.trustProxy = v },
        number("connections-per-ip", "POSTERN_CONNECTIONS_PER_IP", "most connections one client address may hold at once (default 64; 0: no cap; behind a proxy all clients share its address)", minimum: 0, maximum: 1_000_000) { s, v in s.connectionsPerIP = v },
        number("request-timeout", "POSTERN_REQUEST_TIMEOUT", "seconds a connection has to send a whole request, headers and body, after it opens or after the previous answer (default 10)", minimum: 1, maximum: 3600) { s, v in s.requestTimeout = v },
        number("retention-days", "POSTERN_RETENTION_DAYS", "days sent and dead mail is kept (its metadata and the server's reply) before housekeeping deletes it (default 30)", minimum: 1, maximum: 3650) { s, v in s.retentionDays = v },
        number("retention-seconds", "POSTERN_RETENTION_SECONDS", "the same retention in seconds, beating --retention-days when set (for test and soak set-ups that must reach a steady state in minutes)", minimum: 60, maximum: 3650 * 86_400) { s, v in s.retentionSeconds = v },
        number("activity-days", "POSTERN_ACTIVITY_DAYS", "days an account's activity (sign-ins with their device and network, password and address changes, phones, revoked sessions: GET /v1/me/activity) is kept before housekeeping deletes it (default 90)", minimum: 1, maximum: 3650) { s, v in s.activityDays = v },
        number("action-request-grace", "POSTERN_ACTION_REQUEST_GRACE", "seconds an action request is kept after its link expired, before housekeeping deletes it (default 3600)", minimum: 60, maximum: 30 * 86_400) { s, v in s.actionRequestGrace = v },
        number("housekeeping-interval", "POSTERN_HOUSEKEEPING_INTERVAL", "seconds between two housekeeping rounds of the daemon (default 60)", minimum: 1, maximum: 86_400) { s, v in s.housekeepingInterval = v },
        text("trusted-proxies", "POSTERN_TRUSTED_PROXIES", "comma-separated CIDRs of your proxies (10.0.0.0/8,fd00::/8): the client IP is the rightmost X-Forwarded-For hop outside them, read only when the peer is one of them") { s, v in
            s.trustedProxies = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        },
        text("allow-private-targets", "POSTERN_ALLOW_PRIVATE_TARGETS", "comma-separated CIDRs (127.0.0.1/32,10.1.0.0/16) that webhooks, the HTTP mail provider and SMS gateways may reach although they are loopback, link-local, private or multicast (default: none; such targets are refused when set and when connected to)") { s, v throws(SettingsError) in
            do throws(IPNetworkError) { s.allowPrivateTargets = try IPNetwork.list(v) } catch { throw SettingsError(error.description) }
        },
        text("metrics-listen", "POSTERN_METRICS_LISTEN", "HOST:PORT of the listener that serves /metrics without a token, or off (default 127.0.0.1:9464)") { s, v throws(SettingsError) in
            if v.lowercased() == "off" {
                s.metricsListen = nil
                return
            }
            guard let colon = v.lastIndex(of: ":"), UInt16(v[v.index(after: colon)...]) != nil, colon != v.startIndex else {
                throw SettingsError("must be HOST:PORT, such as 127.0.0.1:9464, or off")
            }
            s.metricsListen = v
        },
        text("app-name", "POSTERN_APP_NAME", "the product name every mail and hosted page shows (default Postern)") { s, v throws(SettingsError) in
            let name = v.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.count <= Settings.longestAppName, !name.unicodeScalars.contains(where: ControlCharacters.isControl) else {
                throw SettingsError("must be 1 to \(Settings.longestAppName) characters on one line")
            }
            s.appName = name
        },
        text("support-email", "POSTERN_SUPPORT_EMAIL", "an address users can write to for help, shown in mails and pages (default: none)") { s, v throws(SettingsError) in
            let address: EmailAddress
            do {
                address = try EmailAddress.parse(v)
            } catch {
                throw SettingsError("must be an email address such as help@example.com: \(error)")
            }
            guard MailMailbox.problem(with: address) == nil else {
                throw SettingsError("must be an ASCII address without spaces or angle brackets, such as help@example.com")
            }
            s.supportEmail = address.address
        },
        text("apple-app-ids", "POSTERN_APPLE_APP_IDS", "comma-separated TEAMID.bundle.id of the iOS/macOS apps that open the links (serves /.well-known/apple-app-site-association)") { s, v throws(SettingsError) in
            s.appleAppIDs = try AppleAppID.list(v)
        },
        text("android-apps", "POSTERN_ANDROID_APPS", "comma-separated package:SHA256_CERT_FINGERPRINT of the Android apps that open the links (serves /.well-known/assetlinks.json)") { s, v throws(SettingsError) in
            s.androidApps = try AndroidApp.list(v)
        },
        text("webhook-urls", "POSTERN_WEBHOOK_URLS", "comma-separated http(s) URLs every webhook event is POSTed to, signed in the Standard Webhooks format (default: none, webhooks off; needs --webhook-secret-file)") { s, v throws(SettingsError) in
            let urls = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for url in urls { try WebhookConfiguration.checkURL(url) }
            s.webhookURLs = urls
        },
        text("webhook-events", "POSTERN_WEBHOOK_EVENTS", "the events the --webhook-urls are sent: * (default) or comma-separated types, user.* for every user event (endpoints added by postern webhooks add have their own)") { s, v throws(SettingsError) in
            s.webhookEvents = try WebhookEventFilter(parsing: v)
        },
        text("webhook-secret-file", "POSTERN_WEBHOOK_SECRET_FILE", "file of whsec_… signing secrets, one a line; each event is signed with every one (add the new one, then remove the old, to rotate)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.webhookSecretFile = v
        },
        number("webhook-retry-base", "POSTERN_WEBHOOK_RETRY_BASE", "seconds before a failed webhook is retried the first time, doubled after each failure up to 10 hours; given up after 3 days (default 5)", minimum: 1, maximum: 3600) { s, v in s.webhookRetryBase = v },
        number("webhook-timeout", "POSTERN_WEBHOOK_TIMEOUT", "seconds one webhook POST may take (default 10)", minimum: 1, maximum: 120) { s, v in s.webhookTimeout = v },
        boolean("notify-new-device", "POSTERN_NOTIFY_NEW_DEVICE", "mail the account a \"new sign-in\" notice when it signs in on a device and network (its /24 or /48) it has not signed in from within --activity-days; never for its first sign-in or an anonymous account (default off)") { s, v in s.notifyNewDevice = v },
        boolean("send-no-account-mail", "POSTERN_SEND_NO_ACCOUNT_MAIL", "answer a reset for an unknown address with the no-account mail (default off)") { s, v in s.sendNoAccountMail = v },
        text("sign-up", "POSTERN_SIGN_UP", "who may create an account: open (anyone), invite (only invited addresses, postern users invite or POST /v1/admin/invitations: by the invitation's link, or any way in while it is open) or closed (nobody but by an invitation's own link); a refused sign-up is answered exactly as an accepted one and mailed nothing (see --sign-up-closed-notice); anonymous sign-in answers 403 SIGN_UP_NOT_ALLOWED unless open; existing accounts always sign in (default open)") { s, v throws(SettingsError) in
            guard let mode = SignUpPolicy.Mode(rawValue: v.lowercased()) else { throw SettingsError("must be open, invite or closed, not \(v.debugDescription)") }
            s.signUp.mode = mode
        },
        text("sign-up-domains", "POSTERN_SIGN_UP_DOMAINS", "comma-separated domains whose addresses alone may sign up (exact domains: a subdomain is listed on its own; IDN names match their xn-- form); phone sign-in then creates no account (default: any domain)") { s, v throws(SettingsError) in
            let names = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw SettingsError("must list domains, such as example.com,example.org") }
            var domains: Set<String> = []
            for name in names {
                do throws(EmailAddressError) { domains.insert(try EmailAddress.encodeDomain(name)) } catch {
                    throw SettingsError("\(name.debugDescription) is not a domain: \(error.description)")
                }
            }
            s.signUp.domains = domains
        },
        boolean("sign-up-closed-notice", "POSTERN_SIGN_UP_CLOSED_NOTICE", "mail a refused sign-up's address a short \"sign-ups are closed here\" notice instead of nothing (default off)") { s, v in s.signUp.closedNotice = v },
        number("invitation-lifetime", "POSTERN_INVITATION_LIFETIME", "seconds an invitation's link creates its account (default 604800, 7 days)", minimum: 60, maximum: longestTTL) { s, v in s.invitationLifetime = v },
        text("phone-transfer-days", "POSTERN_PHONE_TRANSFER_DAYS", "days a phone number verified on one account waits before it moves to another account whose owner and the number's holder both agreed, unless its owner releases it sooner or objects; fractions allowed (default 7)") { s, v throws(SettingsError) in
            guard let days = Double(v.trimmingCharacters(in: .whitespaces)), days.isFinite, days >= 0.00001, days <= 365 else {
                throw SettingsError("must be a number of days from 0.00001 to 365, such as 7 or 0.5, not \(v.debugDescription)")
            }
            s.phoneTransferSeconds = max(1, Int64((days * 86_400).rounded()))
        },
        number("oidc-session-days", "POSTERN_OIDC_SESSION_DAYS", "days a browser signed in on the OpenID Connect provider's hosted page stays signed in (its session cookie), so that the next application or prompt=none needs no mail; prompt=login and max_age still ask again (default 14)", minimum: 1, maximum: 365) { s, v in s.oidcSessionDays = v },
        number("phone-code-ttl", "POSTERN_PHONE_CODE_TTL", "seconds the 6-digit code of a phone claim's SMS proves the number (default 600)", minimum: 5, maximum: 3600) { s, v in s.phoneCodeTTL = v },
        boolean("phone-sign-in", "POSTERN_PHONE_SIGN_IN", "let an SMS code sign in to the account that holds the number, as the email link does (POST /v1/phone/send and /v1/phone/complete; a new number makes a new account); signed-out callers can then be sent SMS, so --sms-countries and the SMS caps are the gate (default off: the phone sign-in endpoints answer PHONE_SIGN_IN_DISABLED)") { s, v in s.phoneSignIn = v },
        text("identity-providers", "POSTERN_IDENTITY_PROVIDERS", "JSON file of the identity providers whose ID tokens sign people in (Sign in with Apple, Google, any OpenID provider): an array of {id, issuer?, audiences, jwksUri?, clientId?, clientSecretFile?}, read at start; see docs/providers.md (default: none)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.identityProvidersFile = v
        },
        text("provider-ca-file", "POSTERN_PROVIDER_CA_FILE", "extra CA certificates (PEM) to trust for the identity providers' keys, discovery documents and token endpoints, beside the system's (certificate checks stay on; for a test provider)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.providerCAFile = v
        },
        text("ses-topic-arns", "POSTERN_SES_TOPIC_ARNS", "comma-separated ARNs of the Amazon SNS topics your SES configuration set publishes bounces and complaints to (arn:aws:sns:REGION:ACCOUNT:NAME); POST /v1/delivery-events/ses takes signed messages of these topics only and suppresses their permanent bounces and complaints (default: none, that route answers 404)") { s, v throws(SettingsError) in
            let arns = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for arn in arns where !arn.hasPrefix("arn:") || arn.split(separator: ":", omittingEmptySubsequences: false).count != 6 || arn.count > 256 {
                throw SettingsError("\(arn.debugDescription) is not an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)")
            }
            s.sesTopicARNs = arns
        },
        text("sns-certificate-hosts", "POSTERN_SNS_CERTIFICATE_HOSTS", "comma-separated hosts an SNS message's SigningCertURL and SubscribeURL may name, * standing for one label, HOST:PORT for a port (default: sns.*.amazonaws.com, Amazon SNS's own; add sns.*.amazonaws.com.cn for China's regions)") { s, v throws(SettingsError) in
            s.snsCertificateHosts = try SNSCertificateHosts(parsing: v)
        },
        text("sns-ca-file", "POSTERN_SNS_CA_FILE", "extra CA certificates (PEM) to trust when fetching SNS signing certificates, beside the system's (certificate checks stay on; for a test)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.snsCAFile = v
        },
        text("postmark-webhook-credentials-file", "POSTERN_POSTMARK_WEBHOOK_CREDENTIALS_FILE", "file holding USER:PASSWORD (the password at least 16 characters) that Postmark's bounce and spam complaint webhooks send as HTTP Basic credentials (https://USER:PASSWORD@auth.example.com/v1/delivery-events/postmark); read at start (default: none, that route answers 404)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.postmarkWebhookCredentialsFile = v
        },
        text("delivery-webhook-secret-file", "POSTERN_DELIVERY_WEBHOOK_SECRET_FILE", "file of whsec_… secrets, one a line, a Standard Webhooks provider such as Resend signs its email.bounced and email.complained events with (POST /v1/delivery-events/standard-webhooks); read at start (default: none, that route answers 404)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.deliveryWebhookSecretFile = v
        },
    ] + smsDescriptors + challengeDescriptors + hookDescriptors

    /// The hooks' settings (``SignInHooks``).
    private static let hookDescriptors: [Descriptor] = [
        hookURL(.beforeSignUp, "POSTERN_HOOK_BEFORE_SIGN_UP", "URL POSTed (signed as the webhooks are, with --hook-secret-file) before an account is created by a proved address, number or identity; it answers {\"decision\":\"allow\"} or {\"decision\":\"deny\",\"message\":\"…\"} (403 HOOK_DENIED, the message shown to the person); https, or http to a loopback host (default: none)"),
        hookURL(.beforeSignIn, "POSTERN_HOOK_BEFORE_SIGN_IN", "URL POSTed before an existing account is given a session (by link, code, password, phone or provider), answered as --hook-before-sign-up's (default: none)"),
        hookURL(.tokenClaims, "POSTERN_HOOK_TOKEN_CLAIMS", "URL POSTed before Postern's ID tokens and the OpenID Connect ID and access tokens are issued, refreshes included; it answers {\"claims\":{…}}, at most 2 KiB of JSON, added to the tokens; naming a reserved claim (sub, iss, aud, exp, email, …: docs/operations.md) is a hook failure (default: none)"),
        text("hook-secret-file", "POSTERN_HOOK_SECRET_FILE", "file of whsec_… secrets, one a line, every hook call is signed with in the Standard Webhooks format (webhook-id, webhook-timestamp, webhook-signature); read at start; needed with a hook") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.hookSecretFile = v
        },
        number("hook-timeout", "POSTERN_HOOK_TIMEOUT", "milliseconds one hook call may take, connecting and the answer included; later is a hook failure (default \(HookConfiguration.defaultTimeoutMilliseconds))", minimum: HookConfiguration.timeoutRange.lowerBound, maximum: HookConfiguration.timeoutRange.upperBound) { s, v in s.hookTimeout = v },
        text("hook-failure", "POSTERN_HOOK_FAILURE", "what a hook that does not answer usably (a timeout, no connection, not 2xx, an answer of the wrong shape or over 16 KiB) comes to: closed refuses the sign-in or sign-up (503 HOOK_FAILED), open goes on as if it allowed and added no claims; each failure is logged and counted (default closed)") { s, v throws(SettingsError) in
            guard let mode = HookConfiguration.FailureMode(rawValue: v.lowercased()) else { throw SettingsError("must be open or closed, not \(v.debugDescription)") }
            s.hookFailure = mode
        },
    ]

    private static func hookURL(_ hook: HookKind, _ environment: String, _ help: String) -> Descriptor {
        text(hook.flag, environment, help) { s, v throws(SettingsError) in
            try HookConfiguration.checkURL(v)
            s.hookURLs[hook] = v
        }
    }

    /// The challenge's settings (``ChallengeGate``).
    private static let challengeDescriptors: [Descriptor] = [
        text("challenge", "POSTERN_CHALLENGE", "when send-link, sign-up, reset, phone sign-in and the hosted sign-in page ask the client to solve a challenge before mail or SMS is sent: off, when-limited (once a client IP or a recipient domain passes its hourly threshold without one: --challenge-ip-per-hour, --challenge-domain-per-hour) or always; the answer is 400 CHALLENGE_REQUIRED, the same for every address (default when-limited)") { s, v throws(SettingsError) in
            guard let mode = ChallengeMode(rawValue: v.lowercased()) else { throw SettingsError("must be off, when-limited or always, not \(v.debugDescription)") }
            s.challenge.mode = mode
        },
        number("challenge-difficulty", "POSTERN_CHALLENGE_DIFFICULTY", "the built-in proof of work's largest number (ALTCHA's maxnumber): a client hashes half of it on average, the server checks one hash (default \(ChallengeConfiguration.defaultDifficulty))", minimum: 1_000, maximum: 100_000_000) { s, v in s.challenge.difficulty = v },
        number("challenge-lifetime", "POSTERN_CHALLENGE_LIFETIME", "seconds a proof-of-work challenge from GET /v1/challenge can be solved and used in (default \(ChallengeConfiguration.defaultLifetime))", minimum: 1, maximum: 86_400) { s, v in s.challenge.lifetime = v },
        number("challenge-ip-per-hour", "POSTERN_CHALLENGE_IP_PER_HOUR", "with --challenge when-limited: requests one client IP may make an hour without a solved challenge (0: never asked by IP; default \(ChallengeConfiguration.defaultIPPerHour))", minimum: 0, maximum: 1_000_000_000) { s, v in s.challenge.ipPerHour = v },
        number("challenge-domain-per-hour", "POSTERN_CHALLENGE_DOMAIN_PER_HOUR", "with --challenge when-limited: mails to one recipient domain an hour without a solved challenge, then every request for that domain must solve one (0: never asked by domain; default \(ChallengeConfiguration.defaultDomainPerHour))", minimum: 0, maximum: 1_000_000_000) { s, v in s.challenge.domainPerHour = v },
        text("captcha", "POSTERN_CAPTCHA", "turnstile, hcaptcha or recaptcha: the challenge is that service's CAPTCHA, its token checked with the service's siteverify request (needs --captcha-site-key and --captcha-secret-file; default: none, the built-in proof of work, which needs no third party)") { s, v throws(SettingsError) in
            guard let service = CaptchaService(rawValue: v.lowercased()) else { throw SettingsError("must be turnstile, hcaptcha or recaptcha, not \(v.debugDescription)") }
            s.challenge.captcha = service
        },
        text("captcha-site-key", "POSTERN_CAPTCHA_SITE_KEY", "the CAPTCHA's public site key, given to its widget on the pages and in CHALLENGE_REQUIRED answers") { s, v throws(SettingsError) in
            guard !v.isEmpty, v.count <= 200, v.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { throw SettingsError("must be the service's site key: printable ASCII without spaces") }
            s.challenge.captchaSiteKey = v
        },
        text("captcha-secret-file", "POSTERN_CAPTCHA_SECRET_FILE", "file holding the CAPTCHA's secret key on one line, read at start; sent only to the siteverify URL") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw SettingsError("must not be empty") }
            s.captchaSecretFile = v
        },
        text("captcha-verify-url", "POSTERN_CAPTCHA_VERIFY_URL", "https URL of the CAPTCHA's siteverify endpoint (default: the one the service documents; for a test server, with --provider-ca-file)") { s, v throws(SettingsError) in
            guard let url = URL(string: v), url.scheme == "https", url.host != nil, url.user == nil else {
                throw SettingsError("must be an https:// URL without user info")
            }
            s.challenge.captchaVerifyURL = v
        },
        text("captcha-hostnames", "POSTERN_CAPTCHA_HOSTNAMES", "comma-separated hosts the CAPTCHA may be solved on: the siteverify answer's hostname must be one (default: not checked, as an app's token names its package; set it to your pages' hosts when only pages show the widget)") { s, v throws(SettingsError) in
            let hosts = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard !hosts.isEmpty, hosts.allSatisfy({ !$0.isEmpty && $0.count <= 253 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } }) else {
                throw SettingsError("must be host names separated by commas, such as auth.example.com,www.example.com")
            }
            s.challenge.captchaHostnames = hosts
        },
        text("captcha-minimum-score", "POSTERN_CAPTCHA_MINIMUM_SCORE", "with --captcha recaptcha v3: the lowest score taken, 0.0 to 1.0 (default \(ChallengeConfiguration.defaultMinimumScore)); answers without a score are not judged by it") { s, v throws(SettingsError) in
            guard let score = Double(v), (0.0...1.0).contains(score) else { throw SettingsError("must be a number from 0.0 to 1.0") }
            s.challenge.captchaMinimumScore = score
        },
    ]

    private static func boolean(
        _ flag: String, _ environment: String, _ help: String, _ apply: @escaping @Sendable (inout Settings, Bool) -> Void
    ) -> Descriptor {
        Descriptor(flag: flag, environment: environment, help: help, placeholder: nil) { s, v throws(SettingsError) in
            switch v.lowercased() {
            case "1", "true", "yes", "on": apply(&s, true)
            case "0", "false", "no", "off": apply(&s, false)
            default: throw SettingsError("must be true or false, not \(v.debugDescription)")
            }
        }
    }

    static func text(
        _ flag: String, _ environment: String, _ help: String,
        _ apply: @escaping @Sendable (inout Settings, String) throws(SettingsError) -> Void
    ) -> Descriptor {
        Descriptor(flag: flag, environment: environment, help: help, placeholder: "VALUE", apply: apply)
    }

    /// A whole-number setting within `minimum...maximum`: every number has a bound, so no
    /// setting can overflow the arithmetic it feeds (a TTL of 2^63 − 1 seconds trapped every
    /// send-link; one over ~80 years was cut silently into the code's 32-bit expiry).
    static func number(
        _ flag: String, _ environment: String, _ help: String, minimum: Int64, maximum: Int64,
        _ apply: @escaping @Sendable (inout Settings, Int64) -> Void
    ) -> Descriptor {
        Descriptor(flag: flag, environment: environment, help: help, placeholder: "N") { s, v throws(SettingsError) in
            guard let number = Int64(v.trimmingCharacters(in: .whitespaces)), number >= minimum, number <= maximum else {
                throw SettingsError("must be a whole number from \(minimum) to \(maximum), not \(v.debugDescription)")
            }
            apply(&s, number)
        }
    }

    /// The domains of `--subaddress-domains`: `none` is no domain, else each of the comma-separated
    /// names lower-cased in IDNA A-labels, as ``EmailAddress`` keeps a domain.
    /// - Throws: `SettingsError` for an empty list or a name that is not a domain.
    static func subaddressDomains(_ value: String) throws(SettingsError) -> [String] {
        let names = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if names.map({ $0.lowercased() }) == ["none"] { return [] }
        guard !names.isEmpty else { throw SettingsError("must list domains, or be none") }
        var domains: [String] = []
        for name in names {
            do throws(EmailAddressError) { domains.append(try EmailAddress.encodeDomain(name)) } catch {
                throw SettingsError("\(name.debugDescription) is not a domain: \(error.description)")
            }
        }
        return domains
    }

    /// The longest product name, in characters: it goes into subjects and page titles.
    public static let longestAppName = 100

    /// The longest lifetime a link may have: 30 days.
    public static let longestTTL: Int64 = 30 * 86_400
}

/// A setting that cannot be used; the message says which one and how to fix it.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sentence for the operator.
    public let message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
