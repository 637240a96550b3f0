import Foundation
import PosternCore

/// The files that hold the daemon's outbound secrets (an SMS gateway's token, a provider's client
/// secret, the CAPTCHA's secret, webhook signing secrets), read once at start so that a missing or
/// malformed file stops the start, not a request. Errors name the setting and the file, never
/// what the file holds.
public enum SecretFile {
    /// The file's secret: its one line, trimmed.
    /// - Throws: `SettingsError` when the file cannot be read, is empty, or holds more than one line.
    public static func line(_ path: String, setting: String) throws(SettingsError) -> String {
        let trimmed = try text(path, setting: setting).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw SettingsError("\(setting) \(path): holds no secret") }
        guard !trimmed.contains(where: { $0.isNewline }) else { throw SettingsError("\(setting) \(path): must hold the secret on one line") }
        return trimmed
    }

    /// The file's Standard Webhooks secrets (`whsec_…`), one a line (blank lines and `#` comments
    /// skipped; several while a secret rotates, see ``WebhookSecret/list(_:)``).
    /// - Throws: `SettingsError` when the file cannot be read, holds no secret or a malformed one.
    public static func webhookSecrets(_ path: String, setting: String) throws(SettingsError) -> [WebhookSecret] {
        // Read first: its own error already names the setting and the file.
        let text = try text(path, setting: setting)
        let secrets: [WebhookSecret]
        do { secrets = try WebhookSecret.list(text) } catch {
            throw SettingsError("\(setting) \(path): \(error.message)")
        }
        guard !secrets.isEmpty else { throw SettingsError("\(setting) \(path): holds no secret") }
        return secrets
    }

    private static func text(_ path: String, setting: String) throws(SettingsError) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw SettingsError("\(setting) \(path): cannot be read") }
        return text
    }
}
