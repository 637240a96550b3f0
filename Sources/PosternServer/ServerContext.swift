import PosternCore

/// What the router and the hosted pages need, and nothing more: the flows, the key ring (for the
/// JWKS), the settings they read and a logger. Built by the composition
/// root (`PosternAssembly`), so this target knows neither the store nor the mail transports and
/// its tests drive the router over the in-memory store.
public struct ServerContext: Sendable {
    /// The flows.
    public let service: AuthService
    /// The signing keys, for `/.well-known/jwks.json`.
    public let keys: KeyRingCache
    /// The resolved settings (admin token, public URL).
    public let settings: Settings
    /// Where request failures are logged.
    public let logger: Logger
    /// The hosted pages: their templates and words, per language (`templates/LOCALE/page*`).
    public let pages: PageRenderer

    /// The rows housekeeping removed, for `/metrics` (the daemon's loop counts into it).
    public let housekeeping: HousekeepingMetrics
    /// The claims taken back from dead daemons, for `/metrics` (the heartbeats count into it).
    public let reclaims: ReclaimMetrics
    /// The webhook worker's attempts, for `/metrics`.
    public let webhooks: WebhookMetrics

    /// Creates the context.
    public init(
        service: AuthService, keys: KeyRingCache, settings: Settings, logger: Logger, pages: PageRenderer,
        housekeeping: HousekeepingMetrics = HousekeepingMetrics(), reclaims: ReclaimMetrics = ReclaimMetrics(),
        webhooks: WebhookMetrics = WebhookMetrics()
    ) {
        self.webhooks = webhooks
        self.reclaims = reclaims
        self.housekeeping = housekeeping
        self.pages = pages
        self.service = service
        self.keys = keys
        self.settings = settings
        self.logger = logger
    }
}
