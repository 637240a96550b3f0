import Foundation
import PosternAssembly
import PosternCore
import Testing

/// The hooks' settings (`--hook-*`): a hook URL must be https or http to loopback, a hook needs
/// `--hook-secret-file` and that file needs a hook, and a bad secret file stops the start with exit
/// code 64, naming the file and never its text.
@Suite("The hooks' settings and --hook-secret-file at start")
struct HookStartupTests {
    static func resolve(_ flags: [String: String]) throws(SettingsError) -> Settings {
        try Settings.resolve(flags: flags, environment: [:], file: [:])
    }

    @Test("https anywhere, http only to a loopback host; a hook needs its secret file and the file a hook; timeout and failure bounded")
    func settingsRules() throws {
        let secret = ["hook-secret-file": "/etc/postern/hooks.secret"]
        let s = try Self.resolve(
            secret.merging(["hook-before-sign-up": "https://backend.example.com/up", "hook-token-claims": "http://127.0.0.1:9000/claims",
                            "hook-before-sign-in": "http://localhost:9000/in", "hook-timeout": "500", "hook-failure": "open"]) { $1 })
        #expect(s.hooks.urls == [.beforeSignUp: "https://backend.example.com/up", .tokenClaims: "http://127.0.0.1:9000/claims",
                                 .beforeSignIn: "http://localhost:9000/in"])
        #expect(s.hooks.timeoutMilliseconds == 500 && s.hooks.failure == .open)
        #expect(try Self.resolve([:]).hooks.failure == .closed)
        #expect(try Self.resolve([:]).hooks.timeoutMilliseconds == 2000)
        #expect(try Self.resolve(secret.merging(["hook-before-sign-in": "http://[::1]:9/in"]) { $1 }).hooks.isOn)

        for url in ["http://backend.example.com/in", "http://10.0.0.5/in", "ftp://127.0.0.1/x", "https://user:pw@backend.example.com/"] {
            let error = #expect(throws: SettingsError.self) { try Self.resolve(secret.merging(["hook-before-sign-in": url]) { $1 }) }
            #expect(error?.message.hasPrefix("--hook-before-sign-in: ") == true, "\(url)")
        }
        let noSecret = #expect(throws: SettingsError.self) { try Self.resolve(["hook-token-claims": "https://b.example.com/c"]) }
        #expect(noSecret?.message == "--hook-token-claims needs --hook-secret-file: a file of whsec_… secrets, one a line")
        #expect(throws: SettingsError.self) { try Self.resolve(secret) }
        #expect(throws: SettingsError.self) { try Self.resolve(["hook-timeout": "50"]) }
        #expect(throws: SettingsError.self) { try Self.resolve(["hook-timeout": "60000"]) }
        #expect(throws: SettingsError.self) { try Self.resolve(["hook-failure": "sometimes"]) }
    }

    @Test("an unreadable or malformed --hook-secret-file stops the runtime with exit code 64, naming the file, not the secret")
    func badSecretFileStopsStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        settings.hookURLs = [.beforeSignIn: "https://backend.example.com/in"]
        let missing = directory.appendingPathComponent("missing.secret").path
        settings.hookSecretFile = missing
        let unreadable = #expect(throws: StartupError.self) { _ = try PosternRuntime(settings: settings, logger: Logger(label: "test", sink: { _ in })) }
        #expect(unreadable?.exitCode == 64)
        #expect(unreadable?.description == "--hook-secret-file \(missing): cannot be read")
        let malformed = directory.appendingPathComponent("malformed.secret").path
        try "whsec_not-base64-at-all!!\n".write(toFile: malformed, atomically: true, encoding: .utf8)
        settings.hookSecretFile = malformed
        let bad = #expect(throws: StartupError.self) { _ = try PosternRuntime(settings: settings, logger: Logger(label: "test", sink: { _ in })) }
        #expect(bad?.exitCode == 64)
        #expect(bad?.description.hasPrefix("--hook-secret-file \(malformed): line 1: ") == true)
        #expect(bad?.description.contains("not-base64") == false)
        // Refused before the database was opened.
        #expect(!FileManager.default.fileExists(atPath: settings.database))
    }
}
