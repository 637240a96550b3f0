import Foundation
import PosternCore

extension DeliveryEventSources {
    /// The providers `settings` configure, their files read now, so that a missing or malformed
    /// file stops the start, not a provider's request: `--ses-topic-arns` with SNS certificates
    /// fetched over libcurl (``CurlProviderHTTP``, trusting `--sns-ca-file` beside the system's
    /// CAs), `--postmark-webhook-credentials-file`, `--delivery-webhook-secret-file`.
    /// - Throws: `SettingsError` naming the setting and the file, never a secret.
    public static func load(_ settings: Settings) throws(SettingsError) -> DeliveryEventSources {
        var sources = DeliveryEventSources()
        if let caFile = settings.snsCAFile {
            guard !settings.sesTopicARNs.isEmpty else { throw SettingsError("--sns-ca-file is for --ses-topic-arns, which is not set") }
            guard FileManager.default.isReadableFile(atPath: caFile) else { throw SettingsError("--sns-ca-file \(caFile): cannot be read") }
        }
        if !settings.sesTopicARNs.isEmpty {
            sources.ses = SES(
                topicARNs: Set(settings.sesTopicARNs), certificateHosts: settings.snsCertificateHosts,
                http: CurlProviderHTTP(caFile: settings.snsCAFile))
        }
        if let path = settings.postmarkWebhookCredentialsFile {
            let line = try SecretFile.line(path, setting: "--postmark-webhook-credentials-file")
            do { sources.postmark = try PostmarkCredentials(line: line) } catch {
                throw SettingsError("--postmark-webhook-credentials-file \(path): \(error.message)")
            }
        }
        if let path = settings.deliveryWebhookSecretFile {
            sources.webhookSecrets = try SecretFile.webhookSecrets(path, setting: "--delivery-webhook-secret-file")
        }
        return sources
    }
}
