import Foundation
import PosternCore

/// Hands mail to an HTTP mail provider: one signed JSON POST per message (see
/// ``HTTPMailEndpoint`` for the body), over the webhook sender's libcurl transport, so one worker
/// reuses its connection. The answer is classified by ``DeliveryOutcome/classify(httpStatus:reply:)``.
///
/// Owned by one outbox worker (not `Sendable`, like its handle).
final class HTTPMailTransport: MailTransport {
    private let endpoint: HTTPMailEndpoint
    private let secrets: [WebhookSecret]
    private let clock: any WallClock
    private var poster: CurlWebhookTransport

    init(endpoint: HTTPMailEndpoint, secrets: [WebhookSecret], clock: any WallClock = SystemClock()) {
        self.endpoint = endpoint
        self.secrets = secrets
        self.clock = clock
        poster = Self.poster(endpoint)
    }

    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
        let body = Self.body(of: mail)
        let headers = WebhookSignedHeaders(id: Self.bareID(mail.messageID), timestamp: clock.unixSeconds(), body: body, secrets: secrets)
        let response = poster.post(url: endpoint.url, headers: headers, body: body)
        return DeliveryOutcome.classify(httpStatus: response.status, reply: response.reply)
    }

    func close() { poster = Self.poster(endpoint) }

    private static func poster(_ endpoint: HTTPMailEndpoint) -> CurlWebhookTransport {
        CurlWebhookTransport(timeout: Int64(endpoint.timeout), caFile: endpoint.caFile, userAgent: "Postern-Mail")
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
