import PosternCore

/// POSTs webhooks over libcurl (``CurlHTTPPoster``: one easy handle, so a worker reuses its
/// connections; no redirect, only http and https, `timeout` seconds a call, connecting included,
/// only to addresses `targets` allows).
///
/// Owned by one worker thread (not `Sendable`, like its handle).
public final class CurlWebhookTransport: WebhookTransport {
    private let poster: CurlHTTPPoster

    /// A transport whose calls each take at most `timeout` seconds and connect only to addresses
    /// `targets` allows.
    public init(timeout: Int64, targets: TargetAddressPolicy) { poster = CurlHTTPPoster(timeout: timeout, targets: targets) }

    public func post(url: String, headers: WebhookSignedHeaders, body: String) -> WebhookResponse {
        let answer = poster.post(
            url: url, headers: ["Content-Type: application/json", "User-Agent: Postern-Webhooks"] + headers.lines, body: body)
        if let failure = answer.failure { return WebhookResponse(status: 0, reply: failure) }
        return WebhookResponse(status: answer.status, retryAfter: answer.retryAfter, reply: "HTTP \(answer.status)")
    }
}
