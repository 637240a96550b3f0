import Foundation
@testable import PosternCLI
import PosternAssembly
import PosternCore
import Testing

/// `postern check-config`: every problem at once, the database opened and its keys tried with the
/// master key, nothing made where nothing is. (The SMTP relay's login: Tests/integration/check-config.sh,
/// against aiosmtpd.)
@Suite("check-config")
struct CheckConfigTests {
    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("postern-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("each setting that cannot be read is listed, not only the first; the settings then are nil")
    func everySettingProblem() throws {
        let command = try ParsedCommand.command(
            ["check-config", "--ttl-sign-in", "5", "--workers", "300", "--mail-from", "nobody"], as: CheckConfigCommand.self)
        let (settings, problems) = command.resolve()
        #expect(settings == nil)
        #expect(problems.count == 3, "\(problems)")
        for flag in ["--ttl-sign-in", "--workers", "--mail-from"] {
            #expect(problems.contains { $0.hasPrefix(flag + ": ") }, "\(flag) in \(problems)")
        }
    }

    @Test("a config file's unknown keys are each a problem; keys starting with // are comments")
    func configFileProblems() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("postern.json").path
        try Data(#"{"//public-url": "https://auth.example.com", "ttl-sign-in": 5, "colour": 1, "size": 2}"#.utf8).write(to: URL(fileURLWithPath: file))
        let command = try ParsedCommand.command(["check-config", "--config", file], as: CheckConfigCommand.self)
        let (settings, problems) = command.resolve()
        #expect(settings == nil)
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.contains { $0.contains("unknown key \"colour\"") } && problems.contains { $0.contains("unknown key \"size\"") })
        #expect(problems.contains { $0.hasPrefix("\"ttl-sign-in\" in the config file: ") }, "\(problems)")
        #expect(!problems.contains { $0.contains("//public-url") })
    }

    @Test("a database not made yet is a note, and neither the database nor a key file is made")
    func freshInstall() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = Settings()
        settings.database = folder.appendingPathComponent("postern.db").path
        settings.smtpURL = "file:" + folder.appendingPathComponent("mail").path
        let check = ConfigurationCheck(settings: settings)
        #expect(check.problems.isEmpty, "\(check.problems)")
        #expect(check.notes.contains { $0.contains("does not exist yet") }, "\(check.notes)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test("the master key is tried against the database: the right one passes, another or none is a problem")
    func masterKey() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = Settings()
        settings.database = folder.appendingPathComponent("postern.db").path
        settings.smtpURL = "file:" + folder.appendingPathComponent("mail").path
        let made = try PosternStorage(settings: settings)
        _ = try made.openKeys()
        made.store.close()
        #expect(ConfigurationCheck(settings: settings).problems.isEmpty)

        // Another database's key file: a key, but not this database's.
        var elsewhere = settings
        elsewhere.database = folder.appendingPathComponent("other.db").path
        let other = try PosternStorage(settings: elsewhere)
        other.store.close()
        settings.masterKeyFile = folder.appendingPathComponent("other.key").path
        let wrong = ConfigurationCheck(settings: settings)
        #expect(wrong.problems.count == 1 && wrong.problems[0].contains("is not the one this database's keys were sealed with"), "\(wrong.problems)")

        settings.masterKeyFile = folder.appendingPathComponent("missing.key").path
        let missing = ConfigurationCheck(settings: settings)
        #expect(missing.problems.count == 1 && missing.problems[0].contains("does not exist"), "\(missing.problems)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing.key").path), "no key file is made")
    }

    @Test("problems from several parts are listed together: templates, a webhook secret, the relay's CA")
    func severalParts() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = Settings()
        settings.database = folder.appendingPathComponent("postern.db").path
        settings.templates = folder.appendingPathComponent("no-templates").path
        settings.webhookURLs = ["https://hooks.example.com/postern"]
        settings.smtpURL = "smtp://relay.example.com:587"
        settings.smtpCAFile = folder.appendingPathComponent("no-ca.pem").path
        let check = ConfigurationCheck(settings: settings)
        #expect(check.problems.count == 3, "\(check.problems)")
        #expect(check.problems.contains { $0.hasPrefix("--templates ") })
        #expect(check.problems.contains { $0.contains("--webhook-secret-file") })
        #expect(check.problems.contains { $0.contains("--smtp-ca-file") })
    }
}
