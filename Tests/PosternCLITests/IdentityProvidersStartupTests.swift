import Foundation
import PosternAssembly
import PosternCore
import Testing

/// A bad `--identity-providers` stops the start as other settings do: exit code 64 and a message
/// naming the file, before any provider is asked.
@Suite("postern serve with a bad --identity-providers")
struct IdentityProvidersStartupTests {
    @Test("a providers file naming an unreadable secret file stops the runtime with exit code 64")
    func badProvidersFileStopsStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("providers-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let providers = directory.appendingPathComponent("providers.json").path
        let secret = directory.appendingPathComponent("missing.secret").path
        try #"[{"id": "google", "audiences": ["web"], "clientId": "web", "clientSecretFile": "\#(secret)"}]"#
            .write(toFile: providers, atomically: true, encoding: .utf8)
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        settings.identityProvidersFile = providers
        let error = #expect(throws: StartupError.self) { _ = try PosternRuntime(settings: settings, logger: Logger(label: "test", sink: { _ in })) }
        #expect(error?.exitCode == 64)
        #expect(error?.description == "--identity-providers google's clientSecretFile \(secret): cannot be read")
        // Refused before the database was opened.
        #expect(!FileManager.default.fileExists(atPath: settings.database))
    }

    @Test("--provider-ca-file without --identity-providers or --captcha stops the start (it would trust a CA for nothing); an unreadable --captcha-secret-file too, naming the file and not the secret")
    func caFileAloneAndCaptchaSecretFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("providers-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        settings.providerCAFile = directory.appendingPathComponent("ca.pem").path
        let alone = #expect(throws: StartupError.self) { _ = try PosternRuntime(settings: settings, logger: Logger(label: "test", sink: { _ in })) }
        #expect(alone?.exitCode == 64)
        #expect(alone?.description == "--provider-ca-file is for --identity-providers, --captcha and the hooks, and none is set")
        settings.providerCAFile = nil
        settings.challenge.captcha = .turnstile
        settings.challenge.captchaSiteKey = "site-key"
        let secret = directory.appendingPathComponent("two-lines.secret").path
        try "first-secret-line\nsecond\n".write(toFile: secret, atomically: true, encoding: .utf8)
        settings.captchaSecretFile = secret
        let captcha = #expect(throws: StartupError.self) { _ = try PosternRuntime(settings: settings, logger: Logger(label: "test", sink: { _ in })) }
        #expect(captcha?.exitCode == 64)
        #expect(captcha?.description == "--captcha-secret-file \(secret): must hold the secret on one line")
        #expect(captcha?.description.contains("first-secret-line") == false)
    }
}
