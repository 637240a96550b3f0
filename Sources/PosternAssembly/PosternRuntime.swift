import Foundation
import PosternCore
import PosternCrypto
import PosternMail
import PosternPostgres
import PosternStore

/// Why Postern cannot start: a sentence saying what to fix, and the exit code.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    /// What to fix.
    public let description: String
    /// 64 for a bad setting, 69 when a dependency (the database, the templates) is unusable.
    public let exitCode: Int32

    static func setting(_ message: String) -> StartupError { StartupError(description: message, exitCode: 64) }
    static func dependency(_ message: String) -> StartupError { StartupError(description: message, exitCode: 69) }
}

// The composition root, in layers, each built only by the commands that use it:
//   PosternStorage  the database, its master key file and the key ring   (keys)
//   PosternFlows    + the flows over them                                  (users, outbox)
//   PosternRuntime  + the templates, the transport and the outbox workers  (send-link, handle-link, serve)
// The HTTP layer is built on top by `postern serve` from a `ServerContext`.

/// The database, its master key file and the key ring: what every command that touches state
/// opens, including those that need no templates or transport (`postern keys`).
public struct PosternStorage: Sendable {
    public let store: any Store
    public let keyVault: KeyVault
    /// The master key file the key vault was opened with (a path, never its contents).
    public let masterKeyFile: String
    let clock: any WallClock

    /// Opens (creating and migrating) the database — SQLite for a path, PostgreSQL for a
    /// connection string — and the master key file.
    /// - Throws: `StartupError` (exit 69) naming the database (never a password) and what failed.
    public init(settings: Settings, clock: any WallClock = SystemClock()) throws(StartupError) {
        self.clock = clock
        let database = Self.describe(database: settings.database)
        masterKeyFile = Self.masterKeyFile(settings)
        do {
            let (store, seal) = try Self.openStore(settings)
            self.store = store
            let keyFile = masterKeyFile
            let box: SecretBox
            do {
                box = try MasterKeyFile.loadOrCreate(at: keyFile)
            } catch {
                throw StartupError.dependency("--master-key-file \(keyFile): \(error)")
            }
            // SMS recipients are sealed under the master key (never in the clear in the database).
            seal.set(PhoneNumberSeal(box: box))
            keyVault = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: settings.longestCodeLifetime)
        } catch let error as StartupError {
            throw error
        } catch {
            throw .dependency("--database \(database): \(error)")
        }
    }

    /// The store `settings.database` names: PostgreSQL for a connection string, else a SQLite file.
    /// The one place that tells them apart; everything above sees `any Store`.
    /// The store, and the slot its SMS seal goes into once the master key is loaded.
    static func openStore(_ settings: Settings) throws -> (store: any Store, seal: PhoneSealSlot) {
        let seal = PhoneSealSlot()
        if PostgresConnectionString.isPostgres(settings.database) {
            return (
                try PostgresStore(
                    connectionString: settings.database, connections: Int(settings.pgConnections), notifications: !settings.pgPollOnly,
                    phoneSeal: seal),
                seal)
        }
        if PostgresConnectionString.isMeantAsPostgres(settings.database) {
            throw StoreError.unavailable(
                "the PostgreSQL connection string cannot be read (in a URL, percent-encode reserved characters of the password: % as %25, @ as %40)")
        }
        return (try SQLiteStore(path: settings.database, phoneSeal: seal), seal)
    }

    /// The schema versions this build migrates to, SQLite's and PostgreSQL's (PostgreSQL's first
    /// step made SQLite's first four): a database ahead of its store's is refused.
    public static var schemaVersions: (sqlite: Int, postgres: Int) {
        (SQLiteStore.knownSchemaVersion, PostgresStore.knownSchemaVersion)
    }

    static func masterKeyFile(_ settings: Settings) -> String {
        if let path = settings.masterKeyFile { return path }
        if PostgresConnectionString.isPostgres(settings.database) { return "./postern.key" }
        return MasterKeyFile.path(forDatabase: settings.database)
    }

    /// The database for messages and logs: a SQLite path as given, a PostgreSQL connection string
    /// as host, port, database and user — never its password.
    public static func describe(database: String) -> String {
        if let parsed = PostgresConnectionString(database) { return parsed.description }
        return PostgresConnectionString.isMeantAsPostgres(database) ? "PostgreSQL (a connection string libpq cannot read)" : database
    }

    /// The housekeeping round over this store, with the retention the settings give
    /// (`--retention-days`) and the flows' lifetimes: for the daemon's loop and `maintenance run`.
    /// `settleDue` runs first in each round (the daemon passes the phone transfers its flows settle).
    public func housekeeper(
        settings: Settings, metrics: HousekeepingMetrics = HousekeepingMetrics(),
        settleDue: Housekeeper.SettleDue? = nil
    ) -> Housekeeper {
        Housekeeper(
            store: store, policy: RetentionPolicy(settings: settings, config: AuthConfiguration(settings)), clock: clock,
            metrics: metrics, settleDue: settleDue)
    }

    /// Creates missing keys, removes expired ones, and opens the ring.
    /// - Throws: `StartupError` when the keys cannot be read or opened with the master key; for a
    ///   master key other than the one that sealed them, naming the key file used (never its key).
    public func openKeys() throws(StartupError) -> KeyRingCache {
        do {
            return try KeyRingCache(vault: keyVault, clock: clock)
        } catch let error as CryptoError where error == .authenticationFailed {
            throw .dependency(Self.wrongMasterKey(masterKeyFile))
        } catch {
            throw .dependency("cannot open the signing keys: \(error)")
        }
    }

    /// What to do when the master key file opens none of the database's signing keys: the
    /// database was made with another key (another file, or a daemon started elsewhere).
    static func wrongMasterKey(_ keyFile: String) -> String {
        "cannot open the signing keys: the master key in \(keyFile) is not the one this database's keys were sealed with. "
            + "Give the key file the database was made with: by default the file beside a SQLite database (postern.db → postern.key), "
            + "./postern.key with PostgreSQL, or --master-key-file FILE / POSTERN_MASTER_KEY_FILE; "
            + "every daemon on one database needs the same key file"
    }
}

/// The storage and the flows over it: for the commands that read and change accounts and the
/// outbox but send nothing themselves (`users`, `outbox`). Parses no template, reads no SMTP
/// password.
public struct PosternFlows: Sendable {
    public let settings: Settings
    public let storage: PosternStorage
    public let keys: KeyRingCache
    public let service: AuthService
    public let clock: any WallClock

    /// Opens the storage and builds the flows.
    /// - Throws: `StartupError`.
    /// `identityProviders`: the registry of `--identity-providers` (``PosternRuntime`` reads it).
    public init(
        settings: Settings, clock: any WallClock = SystemClock(), logger: Logger? = nil, identityProviders: ProviderRegistry = .none,
        deliveryEventSources: DeliveryEventSources = .none
    ) throws(StartupError) {
        self.settings = settings
        self.clock = clock
        var config = AuthConfiguration(settings)
        var challengeHTTP: (any ProviderHTTP)?
        if settings.challenge.captcha != nil, let file = settings.captchaSecretFile {
            do throws(SettingsError) {
                config.challenge.captchaSecret = try SecretFile.line(file, setting: "--captcha-secret-file")
            } catch {
                throw .setting(error.message)
            }
            challengeHTTP = CurlProviderHTTP(caFile: settings.providerCAFile)
        }
        var hookHTTP: (any HookHTTP)?
        if !settings.hookURLs.isEmpty, let file = settings.hookSecretFile {
            do throws(SettingsError) {
                config.hooks.secrets = try SecretFile.webhookSecrets(file, setting: "--hook-secret-file")
            } catch {
                throw .setting(error.message)
            }
            hookHTTP = CurlHookHTTP(timeoutMilliseconds: settings.hookTimeout, caFile: settings.providerCAFile)
        }
        storage = try PosternStorage(settings: settings, clock: clock)
        keys = try storage.openKeys()
        let hasher = settings.passwordHasher
        do {
            service = try AuthService(
                store: storage.store, keys: keys, clock: clock, config: config, hasher: hasher, logger: logger,
                identityProviders: identityProviders, challengeHTTP: challengeHTTP, deliveryEventSources: deliveryEventSources,
                hookHTTP: hookHTTP)
        } catch {
            throw .setting(error.logDetail ?? error.message)
        }
    }

    /// The store.
    public var store: any Store { storage.store }

}

/// Everything a command that sends needs: the flows, the templates, the transport and the outbox
/// workers. `postern serve`, `send-link` and `handle-link` open the same store through this.
public final class PosternRuntime: Sendable {
    public let settings: Settings
    public let logger: Logger
    public let flows: PosternFlows
    public let renderer: MailRenderer
    public let workers: OutboxWorkerPool
    public let sender: MailMailbox
    /// The hosted pages, read and checked with the mail templates.
    public let pages: PageRenderer
    /// Deletes what has expired, every minute, once started (`postern serve` starts it).
    public let housekeeping: HousekeepingLoop
    /// Gives back the unspent slices of limits shared in the store (PostgreSQL).
    public let leaseReturns: LeaseReturnLoop
    /// Delivers the queued webhook events once started (`postern serve` starts it): to the
    /// `--webhook-urls` and to the endpoints added by `postern webhooks add`, which may come at
    /// any time, so it always runs.
    public let webhooks: WebhookWorker
    /// The webhook worker's attempts, for `/metrics`.
    public let webhookMetrics = WebhookMetrics()
    /// Delivers queued SMS (started by `postern serve`).
    public let sms: SMSWorker
    /// The SMS templates, rendered with the public URL's host in the origin-bound line.
    public let smsRenderer: SMSRenderer
    /// Makes the configured SMS transport (`postern sms test --now` uses one directly).
    public let smsTransport: SMSTransportFactory
    /// The claims the outbox's and the webhooks' heartbeats took back from dead daemons.
    public let reclaims = ReclaimMetrics()

    /// The mail transport `settings` name (`--smtp-url` and its files), as `serve` and
    /// `check-config` both read it.
    /// - Throws: `StartupError.setting` naming `--smtp-url` and what is wrong with it.
    static func mailTransport(_ settings: Settings) throws(StartupError) -> (MailTransportConfig, MailTransportFactory) {
        do {
            let config = try MailTransportConfig.parse(
                url: settings.smtpURL, caFile: settings.smtpCAFile, passwordFile: settings.smtpPasswordFile,
                signingSecretFile: settings.mailHTTPSecretFile)
            return (config, try config.transportFactory(targets: settings.targetPolicy))
        } catch {
            throw .setting("--smtp-url: \(error)")
        }
    }

    /// Builds the runtime, checking every setting that could fail later (templates, SMTP URL,
    /// public URL) before the database is opened, so that a misconfiguration stops the start with
    /// a clear message.
    /// - Throws: `StartupError`.
    public init(settings: Settings, logger: Logger, clock: any WallClock = SystemClock()) throws(StartupError) {
        self.settings = settings
        self.logger = logger
        do {
            sender = try settings.senderMailbox()
        } catch {
            throw .setting("--mail-from: \(error)")
        }
        let (transportConfig, transportFactory) = try Self.mailTransport(settings)
        let templateDirectory = Self.templateDirectory(settings.templates)
        do {
            let templates = try TemplateDirectory.load(URL(fileURLWithPath: templateDirectory))
            renderer = try templates.renderer(branding: settings.branding)
            pages = try templates.pageRenderer(branding: settings.branding)
            smsRenderer = try templates.smsRenderer(branding: settings.branding, host: Self.publicHost(settings))
        } catch {
            throw .setting("--templates \(templateDirectory): \(error)")
        }
        let secrets = try Self.webhookSecrets(settings)
        do {
            smsTransport = try settings.sms.transport.transportFactory(settings.sms, targets: settings.targetPolicy)
        } catch {
            throw .setting("--sms-transport: \(error.message)")
        }
        let identityProviders: ProviderRegistry
        if settings.providerCAFile != nil, settings.identityProvidersFile == nil, settings.challenge.captcha == nil, settings.hookURLs.isEmpty {
            throw .setting("--provider-ca-file is for --identity-providers, --captcha and the hooks, and none is set")
        }
        do {
            identityProviders = try ProviderRegistry.load(file: settings.identityProvidersFile, caFile: settings.providerCAFile, clock: clock)
        } catch {
            throw .setting(error.message)
        }
        let deliveryEventSources: DeliveryEventSources
        do { deliveryEventSources = try DeliveryEventSources.load(settings) } catch { throw .setting(error.message) }
        flows = try PosternFlows(
            settings: settings, clock: clock, logger: Logger(label: "flows", sink: logger.sink), identityProviders: identityProviders,
            deliveryEventSources: deliveryEventSources)
        let deliveryLogKey: DeliveryLogKey
        do { deliveryLogKey = try flows.storage.keyVault.deliveryLogKey() } catch {
            throw .dependency("cannot derive the delivery log's key: \(error)")
        }
        let service = flows.service
        let renderer = self.renderer
        let sender = self.sender
        workers = OutboxWorkerPool(
            store: flows.store, transport: transportFactory,
            compose: { messages in
                let composed = service.mailComposer.compose(messages.map { ($0.intent, $0.recipient) })
                return zip(messages, composed).map { message, result in
                    Result {
                        guard let composed = try result.get() else { return nil }
                        return try renderer.compose(
                            composed.message, preferences: composed.localePreferences, now: clock.now(), from: sender,
                            messageIDToken: Base64URL.encode(try SecureRandom.bytes(18)),
                            envelopeSender: service.bounces.envelopeSender(messageID: message.id, recipient: message.recipient))
                    }
                }
            },
            clock: clock,
            configuration: OutboxWorkerPool.Configuration(
                workers: Int(settings.workers),
                events: EventLedger(configuration: settings.webhookConfiguration, drawsEveryEvent: !flows.store.isConfinedToThisMachine),
                deliveryLog: DeliveryLog(key: deliveryLogKey, transport: transportConfig.logLabel)),
            logger: Logger(label: "outbox", sink: logger.sink), reclaims: reclaims)
        housekeeping = HousekeepingLoop(
            housekeeper: flows.storage.housekeeper(settings: settings, settleDue: { try service.phoneSettlement.settleDueTransfers() }), interval: .seconds(settings.housekeepingInterval),
            logger: Logger(label: "housekeeping", sink: logger.sink))
        leaseReturns = LeaseReturnLoop(limits: service.leaseHolders, logger: Logger(label: "limits", sink: logger.sink))
        let webhookConfiguration = settings.webhookConfiguration
        let webhookTimeout = settings.webhookTimeout
        let targets = settings.targetPolicy
        webhooks = WebhookWorker(
            store: flows.store, configuration: webhookConfiguration, secrets: secrets,
            endpoints: flows.service.operators.webhookEndpoints,
            transport: { CurlWebhookTransport(timeout: webhookTimeout, targets: targets) }, clock: clock, metrics: webhookMetrics,
            logger: Logger(label: "webhooks", sink: logger.sink), reclaims: reclaims)
        sms = SMSWorker(
            store: flows.store, policy: settings.smsConfiguration.policy, composer: service.smsComposer, renderer: smsRenderer,
            transport: smsTransport, clock: clock, metrics: service.smsMetrics, expiresInMinutes: settings.ttlSignIn / 60,
            logger: Logger(label: "sms", sink: logger.sink), reclaims: reclaims)
        logger.info(
            "configured",
            ["transport": transportConfig.description, "templates": templateDirectory, "webhook_endpoints": String(webhookConfiguration.endpoints.count),
                "sms_transport": settings.sms.transport.description,
                "identity_providers": identityProviders.providers.map(\.id).joined(separator: ","),
                "delivery_events": deliveryEventSources.providers.map(\.rawValue).joined(separator: ","),
                "sms_countries": settings.smsConfiguration.countries.sorted().joined(separator: ",")])
    }

    /// The signing secrets of `--webhook-secret-file`: required, and at least one, when
    /// `--webhook-urls` are set.
    /// - Throws: `StartupError.setting` naming the file and the line, never a secret.
    static func webhookSecrets(_ settings: Settings) throws(StartupError) -> [WebhookSecret] {
        guard !settings.webhookURLs.isEmpty else { return [] }
        guard let path = settings.webhookSecretFile else {
            throw .setting("--webhook-urls needs --webhook-secret-file: a file of whsec_… secrets, one a line")
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw .setting("--webhook-secret-file \(path): cannot be read")
        }
        let secrets: [WebhookSecret]
        do { secrets = try WebhookSecret.list(text) } catch {
            throw .setting("--webhook-secret-file \(path): \(error.message)")
        }
        guard !secrets.isEmpty else { throw .setting("--webhook-secret-file \(path): holds no secret") }
        return secrets
    }

    /// The flows.
    /// The public URL's host: the origin-bound line of every SMS (`@host #123456`).
    static func publicHost(_ settings: Settings) -> String {
        (try? LinkPolicy(publicURL: settings.publicURL, allowedHosts: []))?.host ?? "localhost"
    }

    public var service: AuthService { flows.service }
    /// The store.
    public var store: any Store { flows.store }
    /// The key ring.
    public var keys: KeyRingCache { flows.keys }

    /// Delivers what is queued now (for one-shot commands: a notice queued by `handle-link`),
    /// waiting at most `timeout` seconds; a running daemon would deliver it too. Returns the
    /// counts left.
    @discardableResult
    public func deliverQueued(timeout: Double) -> OutboxCounts {
        // --workers 0: a daemon on the database delivers it.
        guard settings.workers > 0 else { return (try? store.read { try $0.outboxCounts() }) ?? OutboxCounts() }
        workers.start()
        let deadline = Date().addingTimeInterval(timeout)
        var counts = OutboxCounts()
        while Date() < deadline {
            counts = (try? store.read { try $0.outboxCounts() }) ?? counts
            if counts[.queued] + counts[.claimed] == 0 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        workers.stop(timeout: 30)
        return counts
    }

    /// The template directory: the setting, else `templates/` in the working directory, else the
    /// first of `templates/` and `share/postern/templates/` in the executable's directory and up to
    /// three above it: a checkout's (`.build/<config>/postern` → `templates/`) or an installed
    /// package's (`/usr/bin/postern` → `/usr/share/postern/templates`).
    public static func templateDirectory(_ setting: String?) -> String {
        if let setting { return setting }
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: "templates/en") { return "templates" }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "postern").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            for relative in ["templates", "share/postern/templates"] {
                let candidate = directory.appendingPathComponent(relative)
                if fileManager.fileExists(atPath: candidate.appendingPathComponent("en").path) { return candidate.path }
            }
            directory = directory.deletingLastPathComponent()
        }
        return "templates"
    }
}
