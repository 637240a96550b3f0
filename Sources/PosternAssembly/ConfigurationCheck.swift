import Foundation
import PosternCore
import PosternMail
import PosternPostgres
import PosternStore

/// What `postern check-config` finds in resolved settings: each part `PosternRuntime` would build
/// at start checked on its own, so that every problem is listed at once instead of the first; the
/// database opened and the master key tried against its signing keys; the SMTP relay logged in to
/// (EHLO, STARTTLS, AUTH, QUIT, no mail sent).
///
/// Opening the database is what `serve` does at start: a SQLite file is migrated to this
/// postern's schema, and missing signing keys are made. Nothing is created where nothing is: a
/// database or master key file that does not exist yet is a note (the first start makes them).
public struct ConfigurationCheck: Sendable {
    /// What must be fixed before `serve` starts (or before it can deliver), one sentence each;
    /// never a secret.
    public var problems: [String] = []
    /// What was checked and found working, and what the first start will make.
    public var notes: [String] = []

    /// Checks `settings`; `relay`: whether to log in to an SMTP relay (the test of a relay that
    /// is down or not yet set up can be left out with `--no-relay`).
    public init(settings: Settings, relay: Bool = true) {
        checkMail(settings, relay: relay)
        checkTemplates(settings)
        checkOtherFiles(settings)
        checkStorage(settings)
    }

    private mutating func attempt(_ body: () throws -> Void) {
        do { try body() } catch let error as StartupError { problems.append(error.description) } catch let error as SettingsError {
            problems.append(error.message)
        } catch { problems.append("\(error)") }
    }

    private mutating func checkMail(_ settings: Settings, relay: Bool) {
        do { _ = try settings.senderMailbox() } catch { problems.append("--mail-from: \(error)") }
        let factory: MailTransportFactory
        let config: MailTransportConfig
        do { (config, factory) = try PosternRuntime.mailTransport(settings) } catch {
            problems.append(error.description)
            return
        }
        guard case .smtp = config else {
            notes.append("mail goes to \(config.description)")
            return
        }
        guard relay else {
            notes.append("the SMTP relay \(config.description) was not tried (--no-relay)")
            return
        }
        do {
            guard let transport = try factory() as? SMTPTransport else { return }
            if let failure = transport.checkRelay() {
                problems.append("--smtp-url \(config.description): \(failure)")
            } else {
                notes.append("the SMTP relay \(config.description) took EHLO, STARTTLS and the login where asked, and QUIT (nothing sent)")
            }
        } catch {
            problems.append("--smtp-url: \(error)")
        }
    }

    private mutating func checkTemplates(_ settings: Settings) {
        let directory = PosternRuntime.templateDirectory(settings.templates)
        do {
            let templates = try TemplateDirectory.load(URL(fileURLWithPath: directory))
            _ = try templates.renderer(branding: settings.branding)
            _ = try templates.pageRenderer(branding: settings.branding)
            _ = try templates.smsRenderer(branding: settings.branding, host: PosternRuntime.publicHost(settings))
            notes.append("templates: \(directory)")
        } catch {
            problems.append("--templates \(directory): \(error)")
        }
    }

    /// The files and secrets the start reads besides mail and templates.
    private mutating func checkOtherFiles(_ settings: Settings) {
        attempt { _ = try PosternRuntime.webhookSecrets(settings) }
        attempt { _ = try settings.sms.transport.transportFactory(settings.sms, targets: settings.targetPolicy) }
        if settings.providerCAFile != nil, settings.identityProvidersFile == nil, settings.challenge.captcha == nil {
            problems.append("--provider-ca-file is for --identity-providers and --captcha, and neither is set")
        }
        attempt { _ = try ProviderRegistry.load(file: settings.identityProvidersFile, caFile: settings.providerCAFile) }
        attempt { _ = try DeliveryEventSources.load(settings) }
        if settings.challenge.captcha != nil, let file = settings.captchaSecretFile {
            attempt { _ = try SecretFile.line(file, setting: "--captcha-secret-file") }
        }
    }

    /// Opens the database and its signing keys with the master key, as the start does; a SQLite
    /// file or key file not made yet is a note, and a SQLite file another user owns is not opened
    /// (its new -wal and -shm files would be that user's: the daemon could no longer open them).
    private mutating func checkStorage(_ settings: Settings) {
        let database = PosternStorage.describe(database: settings.database)
        let keyFile = PosternStorage.masterKeyFile(settings)
        let fileManager = FileManager.default
        let postgres = PostgresConnectionString.isPostgres(settings.database)
        if !postgres {
            guard fileManager.fileExists(atPath: settings.database) else {
                notes.append("the database \(database) does not exist yet: the first start of serve makes it, and the master key file \(keyFile)")
                return
            }
            var info = stat()
            if stat(settings.database, &info) == 0, info.st_uid != geteuid() {
                problems.append(
                    "the database \(database) belongs to user \(info.st_uid), not to this one (\(geteuid())): run check-config as its owner, "
                        + "such as sudo -u postern postern check-config --config /etc/postern/postern.json")
                return
            }
        }
        guard fileManager.fileExists(atPath: keyFile) else {
            problems.append(
                "the master key file \(keyFile) does not exist: the database's signing keys cannot be opened without the file they were sealed with; "
                    + "restore it from the backup (the first start of a new database makes it)")
            return
        }
        let storage: PosternStorage
        do { storage = try PosternStorage(settings: settings) } catch {
            problems.append(error.description)
            return
        }
        defer { storage.store.close() }
        do {
            _ = try storage.openKeys()
            notes.append("the database \(database) opened, and the master key \(keyFile) opens its signing keys")
        } catch {
            problems.append(error.description)
        }
    }
}
