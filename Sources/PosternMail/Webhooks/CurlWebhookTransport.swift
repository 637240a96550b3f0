internal import CCurl
import PosternCore

/// POSTs webhooks over libcurl: one easy handle, so a worker reuses its connections. Follows no
/// redirect (a 3xx is a failed attempt), speaks only http and https, and gives each call
/// `timeout` seconds, connecting included.
///
/// Owned by one worker thread (not `Sendable`, like its handle).
public final class CurlWebhookTransport: WebhookTransport {
    private let timeout: Int
    private let caFile: String?
    private let userAgent: String
    private var handle: CurlEasyHandle?

    /// A transport whose calls each take at most `timeout` seconds, trusting the extra CA
    /// certificates in `caFile` (PEM) beside the system's.
    public init(timeout: Int64, caFile: String? = nil, userAgent: String = "Postern-Webhooks") {
        self.timeout = Int(max(1, timeout))
        self.caFile = caFile
        self.userAgent = userAgent
    }

    public func post(url: String, headers: WebhookSignedHeaders, body: String) -> WebhookResponse {
        do {
            let handle = try self.handle ?? CurlEasyHandle()
            self.handle = handle
            try handle.set(CURLOPT_URL, url)
            try handle.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try handle.set(CURLOPT_FOLLOWLOCATION, 0)
            try handle.set(CURLOPT_TIMEOUT, timeout)
            try handle.set(CURLOPT_CONNECTTIMEOUT, min(timeout, 10))
            if let caFile { try handle.set(CURLOPT_CAINFO, caFile) }
            try handle.set(CURLOPT_POST, 1)
            // JSON text holds no NUL, so curl's strlen of the copied string is the body's length.
            try handle.set(CURLOPT_COPYPOSTFIELDS, body)
            try handle.setHeaders(["Content-Type: application/json", "User-Agent: \(userAgent)", "Expect:"] + headers.lines)
            try handle.setWriteFunction(webhookDiscardResponse)
            try handle.perform()
            let status = handle.responseCode
            return WebhookResponse(
                status: status, retryAfter: WebhookResponse.retryAfterSeconds(handle.responseHeader("Retry-After")),
                reply: "HTTP \(status)")
        } catch {
            // A failed handle may hold a broken connection: the next call starts afresh.
            handle = nil
            return WebhookResponse(status: 0, reply: "\(error)")
        }
    }
}

/// The receiver's response body is not read.
private func webhookDiscardResponse(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    size * count
}
