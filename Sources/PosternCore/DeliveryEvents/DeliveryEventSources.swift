import Foundation
import PosternCrypto

/// The providers whose delivery events Postern takes, and how each proves a request is its own
/// (read at start by the assembly: `--ses-topic-arns`, `--postmark-webhook-credentials-file`,
/// `--delivery-webhook-secret-file`). A provider left out answers 404 at its route.
public struct DeliveryEventSources: Sendable {
    /// Amazon SES through SNS: the topics taken, the hosts certificates come from, and the client
    /// that fetches them (https only, certificates checked).
    public struct SES: Sendable {
        /// The topics taken (`--ses-topic-arns`).
        public var topicARNs: Set<String>
        /// The hosts certificates and confirmations come from (`--sns-certificate-hosts`).
        public var certificateHosts: SNSCertificateHosts
        /// The client that fetches them.
        public var http: any ProviderHTTP

        /// SES over the topics `topicARNs`, certificates from `certificateHosts` through `http`.
        public init(topicARNs: Set<String>, certificateHosts: SNSCertificateHosts, http: any ProviderHTTP) {
            self.topicARNs = topicARNs
            self.certificateHosts = certificateHosts
            self.http = http
        }
    }

    /// Amazon SES over SNS, when `--ses-topic-arns` is set.
    public var ses: SES?
    /// Postmark's webhook credentials, when `--postmark-webhook-credentials-file` is set.
    public var postmark: PostmarkCredentials?
    /// The `whsec_` secrets Standard Webhooks providers sign with; empty: that route is off.
    public var webhookSecrets: [WebhookSecret]

    /// The providers given; the rest answer 404.
    public init(ses: SES? = nil, postmark: PostmarkCredentials? = nil, webhookSecrets: [WebhookSecret] = []) {
        self.ses = ses
        self.postmark = postmark
        self.webhookSecrets = webhookSecrets
    }

    /// No provider: every intake route answers 404.
    public static let none = DeliveryEventSources()
}

/// The HTTP Basic credentials Postmark sends to its webhook URL (`https://USER:PASSWORD@host/…`),
/// kept as a SHA-256 hash of `USER:PASSWORD` only, compared in constant time.
public struct PostmarkCredentials: Sendable, CustomStringConvertible {
    private let hash: [UInt8]

    /// The credentials of the line `USER:PASSWORD` (the password at least 16 characters).
    /// - Throws: `SettingsError` saying what is wrong, never echoing the line.
    public init(line: String) throws(SettingsError) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let colon = trimmed.firstIndex(of: ":"), colon != trimmed.startIndex else {
            throw SettingsError("must hold USER:PASSWORD on one line")
        }
        guard trimmed[trimmed.index(after: colon)...].count >= 16 else { throw SettingsError("the password must be at least 16 characters") }
        hash = SHA256.hash(trimmed)
    }

    /// Whether the `Authorization` header `header` is `Basic` with these credentials.
    public func admits(authorization header: String?) -> Bool {
        guard let header, header.count <= 1024, header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces))
        else { return false }
        return ConstantTime.equals(SHA256.hash(Array(decoded)), hash)
    }

    public var description: String { "PostmarkCredentials(…)" }
}

extension DeliveryEventSources {
    /// The providers configured, for the start's log line.
    public var providers: [DeliveryEventIntake.Provider] {
        (ses == nil ? [] : [.ses]) + (postmark == nil ? [] : [.postmark]) + (webhookSecrets.isEmpty ? [] : [.standardWebhooks])
    }
}
