import Foundation
import PosternCore

/// Hands mail to an HTTP mail provider: one signed JSON POST per message (see
/// ``HTTPMailEndpoint`` for the body), over the one libcurl POST (``CurlHTTPPoster``, shared with webhooks and SMS), so one worker
/// reuses its connection. The answer is classified by ``DeliveryOutcome/classify(httpStatus:reply:)``.
///
/// Owned by one outbox worker (not `Sendable`, like its handle).
final class HTTPMailTransport: MailTransport {
    private let endpoint: HTTPMailEndpoint
    private let secrets: [WebhookSecret]
    private let clock: any WallClock
    private let targets: TargetAddressPolicy
    private var poster: CurlHTTPPoster

    init(endpoint: HTTPMailEndpoint, secrets: [WebhookSecret], targets: TargetAddressPolicy, clock: any WallClock = SystemClock()) {
        self.endpoint = endpoint
        self.secrets = secrets
        self.clock = clock
        self.targets = targets
        poster = Self.poster(endpoint, targets)
    }

    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
        let body = Self.body(of: mail)
        let headers = WebhookSignedHeaders(id: Self.bareID(mail.messageID), timestamp: clock.unixSeconds(), body: body, secrets: secrets)
        let answer = poster.post(url: endpoint.url, headers: ["Content-Type: application/json", "User-Agent: Postern-Mail"] + headers.lines, body: body)
        if let failure = answer.failure { return .transient(reply: failure, connectionFailed: true) }
        return DeliveryOutcome.classify(httpStatus: answer.status, reply: "HTTP \(answer.status)")
    }

    func close() { poster = Self.poster(endpoint, targets) }

    private static func poster(_ endpoint: HTTPMailEndpoint, _ targets: TargetAddressPolicy) -> CurlHTTPPoster {
        CurlHTTPPoster(timeout: Int64(endpoint.timeout), caFile: endpoint.caFile, targets: targets)
    }

    /// The Message-ID without its angle brackets: `token@domain`.
    static func bareID(_ messageID: String) -> String {
        messageID.hasPrefix("<") && messageID.hasSuffix(">") ? String(messageID.dropFirst().dropLast()) : messageID
    }

    /// `{"type":"mail.send","messageId":…,"from":…,"to":[…],"raw":…}`, keys sorted.
    static func body(of mail: OutgoingMail) -> String {
        struct Body: Encodable {
            let type = "mail.send"
            let messageId: String
            let from: String
            let to: [String]
            let raw: String
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let value = Body(
            messageId: bareID(mail.messageID), from: mail.envelope.sender, to: mail.envelope.recipients,
            raw: Data(mail.bytes).base64EncodedString())
        // Encoding strings and arrays of strings cannot fail.
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }
}
