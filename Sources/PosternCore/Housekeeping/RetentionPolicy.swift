/// A kind of row that expires and that housekeeping deletes once nothing can need it. The raw
/// value names the table, as the metrics and the `maintenance run` report label it.
public enum ExpiringRows: String, Sendable, CaseIterable, Codable {
    /// Requests for emailed actions, past their expiry plus ``RetentionPolicy/actionRequestGrace``.
    case actionRequests = "action_requests"
    /// The single-use ledger: an entry goes when its code expires, never before.
    case consumedCodes = "consumed_codes"
    /// Refresh tokens, at their own expiry (rotated and revoked ones too; see ``RetentionPolicy``).
    case refreshTokens = "refresh_tokens"
    /// Sent and dead outbox messages (the row is the delivery record), after the retention.
    case outbox = "outbox"
    /// Rate-limit events that have left the rolling hour.
    case rateEvents = "rate_events"
    /// Fixed-window counters (the SMS caps of a country's hour and of the day, and each client
    /// network's share of them) whose window started a day or more ago: no window is longer than
    /// a day, so it has ended, and a counter of a new window starts afresh anyway.
    case rateWindows = "rate_windows"
    /// Guess budgets quiet for their forget time.
    case guessBudgets = "guess_budgets"
    /// Delivered and abandoned webhook deliveries, after the outbox's retention.
    case webhookDeliveries = "webhook_deliveries"
    /// Per-client-IP limits that are full again (``ClientRatePolicy``: the row says nothing then).
    case clientRate = "client_rate"
    /// The delivery log's attempts, after the outbox's retention (counted from the attempt).
    case outboxAttempts = "outbox_attempts"
    /// Sent and dead SMS, after the outbox's retention.
    case smsOutbox = "sms_outbox"
    /// Unfinished phone claims (never verified, not awaiting a transfer), past their life plus
    /// ``RetentionPolicy/actionRequestGrace``.
    case phoneClaims = "phone_claims"
    /// Phone sign-in requests (`--phone-sign-in`), at their code's expiry: neither the sign-in nor
    /// the SMS composer reads one after it.
    case phoneSignIns = "phone_sign_ins"
    /// OpenID Connect authorization codes, consumed or not, past their expiry plus
    /// ``RetentionPolicy/authorizationCodeGrace``.
    case oidcCodes = "oidc_codes"
    /// OpenID Connect authorization requests waiting for a sign-in, at their expiry: the hosted
    /// page refuses one from then on.
    case oidcRequests = "oidc_requests"
    /// OpenID Connect browser sessions, at their expiry: a browser signs in again from then on.
    case oidcBrowserSessions = "oidc_browser_sessions"
    /// The replay ledger of identity providers' ID tokens, past the token's expiry plus
    /// ``RetentionPolicy/providerTokenGrace``.
    case providerTokenUses = "provider_token_uses"
    /// The sessions users see (`GET /v1/me/sessions`), at their refresh token's expiry, as the
    /// refresh tokens themselves (a revoked one is gone already).
    case sessions = "sessions"
    /// Accounts' activity, ``RetentionPolicy/activityRetention`` after it happened (`--activity-days`).
    case accountActivity = "account_activity"
}

/// What is old enough to delete at a moment: for each kind of expiring row, the horizon — a row
/// whose time (see each case of ``ExpiringRows``) is at or before it can no longer matter. A pure
/// value: the store applies the horizons, the ``Housekeeper`` asks for them with its clock's now.
///
/// Each horizon is where the flows themselves stop reading the row, so deleting at it changes no
/// answer:
/// - a code is refused as expired once `now >= expiresAt` (``ActionCodeAuthority``) before the
///   ledger is looked at, so its ledger entry goes at `expires_at <= now`;
/// - an action request's code expires with it; the grace keeps it for a composer or an approval
///   wait that read it a moment before (and for daemons whose clocks differ a little);
/// - a refresh token is refused as invalid once `now >= expiresAt` before anything else. A rotated
///   token is kept until then too, not just for ``AuthConfiguration/refreshReuseGrace``: after the
///   grace, presenting it again is how a replay is detected (the family is revoked, the thief's
///   successor with it), and a deleted token would only be "unknown";
/// - an authorization code is refused as expired once `now >= expiresAt`; the grace keeps a used one
///   a while longer, so that a replay soon after is still told from an unknown code and revokes
///   what the code gave (RFC 6749 §4.1.2), rather than only failing;
/// - a pending authorization request and a browser session are refused once `now >= expiresAt`;
/// - a provider's ID token is refused as expired once it is past its `exp` by more than the
///   verifier's allowance for skewed clocks (``ProviderTokenVerifier/skew``), so its ledger entry
///   is kept that long after the expiry it records;
/// - a rate event counts while `at > now - 3600` (``RateLimitPolicy``);
/// - a guess budget is forgotten once `now - lastFailureAt >= forgetAfter` (``GuessBudget``).
public struct RetentionPolicy: Sendable, Equatable {
    /// Seconds an action request is kept after it expired.
    public var actionRequestGrace: Int64 = 3600
    /// Seconds a sent or dead outbox message is kept after it finished (`--retention-days`).
    public var outboxRetention: Int64 = 30 * 86_400
    /// The rate limits' rolling window.
    public var rateWindow: Int64 = RateLimitPolicy.window
    /// Seconds without a failure after which a guess budget is forgotten.
    public var guessForgetAfter: Int64 = GuessBudget().forgetAfter
    /// Seconds an OpenID Connect authorization code is kept after it expired (replay detection).
    public var authorizationCodeGrace: Int64 = 600
    /// Seconds a provider's ID token's ledger entry is kept after the token's expiry: as long as
    /// the verifier still accepts it there.
    public var providerTokenGrace: Int64 = ProviderTokenVerifier.skew
    /// Seconds an account's activity is kept (`--activity-days`).
    public var activityRetention: Int64 = 90 * 86_400

    /// The defaults: a one-hour grace, 30 days of finished mail.
    public init() {}

    /// From the resolved settings (`--retention-days` or `--retention-seconds`,
    /// `--action-request-grace`) and the flows' configuration (the guess budget's forget time).
    public init(settings: Settings, config: AuthConfiguration) {
        outboxRetention = settings.outboxRetention
        activityRetention = settings.activityDays * 86_400
        actionRequestGrace = settings.actionRequestGrace
        guessForgetAfter = config.guessBudget.forgetAfter
    }

    /// The newest time of a row of `rows` that may be deleted at `now`: rows at or before it go.
    public func horizon(for rows: ExpiringRows, now: Int64) -> Int64 {
        switch rows {
        case .consumedCodes, .refreshTokens, .clientRate, .phoneSignIns, .oidcRequests, .oidcBrowserSessions, .sessions: now
        case .actionRequests, .phoneClaims: now - actionRequestGrace
        case .outbox, .webhookDeliveries, .outboxAttempts, .smsOutbox: now - outboxRetention
        case .rateEvents: now - rateWindow
        case .rateWindows: now - SMSAdmission.day
        case .guessBudgets: now - guessForgetAfter
        case .oidcCodes: now - authorizationCodeGrace
        case .providerTokenUses: now - providerTokenGrace
        case .accountActivity: now - activityRetention
        }
    }
}
