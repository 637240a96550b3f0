import Foundation
import PosternCore

extension ProviderRegistry {
    /// The registry of `--identity-providers FILE`, asking the providers over libcurl
    /// (``CurlProviderHTTP``, trusting `--provider-ca-file` beside the system's CAs); `.none`
    /// without a file. Every `clientSecretFile` is read now (one line, trimmed), so a missing
    /// secret stops the start, not a sign-in.
    /// - Throws: `SettingsError` naming the file, the entry or the secret's file that is wrong,
    ///   never a secret.
    public static func load(file: String?, caFile: String?, clock: any WallClock = SystemClock()) throws(SettingsError) -> ProviderRegistry {
        guard let file else { return .none }
        guard let json = FileManager.default.contents(atPath: file) else { throw SettingsError("--identity-providers \(file): cannot be read") }
        let providers = try IdentityProvider.parseList(json)
        var secrets: [String: String] = [:]
        for provider in providers {
            guard let path = provider.clientSecretFile else { continue }
            secrets[provider.id] = try SecretFile.line(path, setting: "--identity-providers \(provider.id)'s clientSecretFile")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw SettingsError("--provider-ca-file \(caFile): cannot be read")
        }
        return ProviderRegistry(providers: providers, clientSecrets: secrets, http: CurlProviderHTTP(caFile: caFile), clock: clock)
    }
}
