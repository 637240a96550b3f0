import Foundation
import PosternCore
import PosternMail
import Testing

/// `--identity-providers FILE` read at start: the file, each `clientSecretFile`, `--provider-ca-file`.
/// Every refusal names the file or entry, never a secret.
@Suite("ProviderRegistry.load: the providers file and its secret files, read at start")
struct ProviderRegistryLoadTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("providers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func providers(secretFile: String) throws -> String {
        try write(
            "providers.json",
            """
            [{"id": "google", "audiences": ["web.apps.googleusercontent.com"]},
             {"id": "acme", "issuer": "https://idp.example", "audiences": ["postern"], "clientId": "postern", "clientSecretFile": "\(secretFile)"}]
            """)
    }

    func refusal(file: String?, caFile: String? = nil) -> String {
        let error = #expect(throws: SettingsError.self) { _ = try ProviderRegistry.load(file: file, caFile: caFile) }
        return error?.message ?? ""
    }

    @Test("no file: no providers; a good file: its providers, in order")
    func loads() throws {
        #expect(try ProviderRegistry.load(file: nil, caFile: nil).providers.isEmpty)
        let secret = try write("acme.secret", "  s3cret-value\n")
        let registry = try ProviderRegistry.load(file: providers(secretFile: secret), caFile: nil)
        #expect(registry.providers.map(\.id) == ["google", "acme"])
        #expect(registry.webProviders.map(\.id) == ["acme"])
    }

    @Test("a missing, empty or two-line secret file stops the start, naming the file and never its content")
    func secretFileRefused() throws {
        let missing = directory.appendingPathComponent("nope.secret").path
        let message = refusal(file: try providers(secretFile: missing))
        #expect(message == "--identity-providers acme's clientSecretFile \(missing): cannot be read")
        let empty = try write("empty.secret", "\n")
        #expect(refusal(file: try providers(secretFile: empty)).hasSuffix("\(empty): holds no secret"))
        let twoLines = try write("two.secret", "first-secret\nsecond-secret\n")
        let twoLinesMessage = refusal(file: try providers(secretFile: twoLines))
        #expect(twoLinesMessage.hasSuffix("\(twoLines): must hold the secret on one line") && !twoLinesMessage.contains("first-secret") && !twoLinesMessage.contains("second-secret"))
    }

    @Test("an unreadable or bad providers file and an unreadable CA file are refused; a CA file without providers is the runtime's to judge (--captcha uses it too)")
    func fileRefused() throws {
        let missing = directory.appendingPathComponent("missing.json").path
        #expect(refusal(file: missing) == "--identity-providers \(missing): cannot be read")
        let bad = try write("bad.json", #"[{"id": "acme", "audiences": ["x"]}]"#)
        #expect(refusal(file: bad) == "--identity-providers entry 1 (acme): needs \"issuer\", the provider's https issuer URL")
        let good = try write("good.json", #"[{"id": "google", "audiences": ["x"]}]"#)
        let ca = directory.appendingPathComponent("ca.pem").path
        #expect(refusal(file: good, caFile: ca) == "--provider-ca-file \(ca): cannot be read")
        #expect(try ProviderRegistry.load(file: nil, caFile: ca).providers.isEmpty)
    }
}
