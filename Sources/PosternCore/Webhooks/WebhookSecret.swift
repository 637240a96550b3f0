import Foundation
import PosternCrypto

/// One endpoint signing secret in the Standard Webhooks form, `whsec_` then the key in base64.
/// Its `description` never shows the key.
public struct WebhookSecret: Sendable, CustomStringConvertible {
    private let key: HMACKey

    /// Parses `whsec_<base64>` (the key 24 to 64 bytes, as the Standard Webhooks libraries make them).
    /// - Throws: `SettingsError` saying what is wrong, never echoing the text.
    public init(_ text: String) throws(SettingsError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(trimmed.dropFirst(6))) else {
            throw SettingsError("a webhook secret must be whsec_ followed by base64")
        }
        guard bytes.count >= 24, bytes.count <= 64 else {
            throw SettingsError("a webhook secret's key must be 24 to 64 bytes, not \(bytes.count)")
        }
        do { key = try HMACKey(key: bytes) } catch { throw SettingsError("unusable webhook secret: \(error)") }
    }

    /// The secrets of a secret file: one `whsec_…` a line; blank lines and `#` comments skipped.
    /// Several while a secret rotates: each delivery is signed with all of them.
    /// - Throws: `SettingsError` naming the line.
    public static func list(_ text: String) throws(SettingsError) -> [WebhookSecret] {
        var secrets: [WebhookSecret] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do { secrets.append(try WebhookSecret(trimmed)) } catch { throw SettingsError("line \(number + 1): \(error.message)") }
        }
        return secrets
    }

    /// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
    public func signature(id: String, timestamp: Int64, body: String) -> String {
        "v1," + Data(key.authenticate(Array("\(id).\(timestamp).\(body)".utf8))).base64EncodedString()
    }

    /// Whether the `webhook-signature` header `header` (space-separated `v1,…` entries) holds this
    /// secret's signature of `body` for `id` and `timestamp`: the one ``signature(id:timestamp:body:)``
    /// that signs Postern's own webhooks checks a provider's, compared in constant time.
    public func signed(_ header: String, id: String, timestamp: Int64, body: String) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body).utf8)
        return header.split(separator: " ").contains { ConstantTime.equals(Array($0.utf8), expected) }
    }

    public var description: String { "whsec_…" }
}

/// The three Standard Webhooks headers of one attempt.
public struct WebhookSignedHeaders: Sendable, Hashable {
    /// `webhook-id`: the event's id, the same on every attempt.
    public let id: String
    /// `webhook-timestamp`: the attempt's time, Unix seconds.
    public let timestamp: Int64
    /// `webhook-signature`: one `v1,…` per secret, space-separated.
    public let signature: String

    /// Signs `body` for attempt time `timestamp` with every secret.
    public init(id: String, timestamp: Int64, body: String, secrets: [WebhookSecret]) {
        self.id = id
        self.timestamp = timestamp
        signature = secrets.map { $0.signature(id: id, timestamp: timestamp, body: body) }.joined(separator: " ")
    }

    /// The header lines, `Name: value`.
    public var lines: [String] {
        ["webhook-id: \(id)", "webhook-timestamp: \(timestamp)", "webhook-signature: \(signature)"]
    }
}
