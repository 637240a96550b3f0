import Foundation
import PosternCore

/// Sends SMS to any other provider's gateway as a signed JSON POST: the body
/// `{"body","reference","to"}` (sorted keys), signed with the webhook sender's Standard Webhooks
/// headers (``WebhookSignedHeaders``: `webhook-id` is the SMS's reference, the same on every
/// attempt, so the gateway can drop a repeat). The receiver verifies it with any Standard
/// Webhooks library. 2xx sent; network failures, 429 and 5xx retried; other 4xx dead.
public final class JSONSMSTransport: SMSTransport {
    private let url: String
    private let secrets: [WebhookSecret]
    private let poster: CurlHTTPPoster
    private let clock: any WallClock

    public init(url: String, secrets: [WebhookSecret], caFile: String?, timeout: Int64, targets: TargetAddressPolicy, clock: any WallClock = SystemClock()) {
        self.url = url
        self.secrets = secrets
        self.clock = clock
        poster = CurlHTTPPoster(timeout: timeout, caFile: caFile, targets: targets)
    }

    /// The request body.
    static func body(_ sms: OutgoingSMS) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(["to": sms.to.e164, "body": sms.body, "reference": sms.reference])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    public func send(_ sms: OutgoingSMS) -> SMSResponse {
        let body = Self.body(sms)
        let headers = WebhookSignedHeaders(id: sms.reference, timestamp: clock.unixSeconds(), body: body, secrets: secrets)
        let answer = poster.post(
            url: url, headers: ["Content-Type: application/json", "User-Agent: Postern-SMS"] + headers.lines, body: body)
        if let failure = answer.failure { return SMSResponse(status: 0, reply: failure) }
        return SMSResponse(status: answer.status, retryAfter: answer.retryAfter, reply: "HTTP \(answer.status)")
    }
}
