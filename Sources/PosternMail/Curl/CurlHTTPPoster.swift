internal import CCurl
import PosternCore

/// What one HTTP POST came to: the status (0 when there was none), `Retry-After` in seconds,
/// the first 64 KiB of the answer's body, or the local failure.
struct CurlHTTPAnswer {
    let status: Int
    let retryAfter: Int64?
    let body: [UInt8]
    /// The transfer's failure (no connection, a timeout, a certificate refused), or nil.
    let failure: String?
}

/// POSTs over one libcurl easy handle, so its user reuses the connection: the webhook worker and
/// the SMS transports. Follows no redirect, speaks only http and https, checks certificates
/// (an extra CA file may be given), gives each call `timeout` seconds, connecting included.
///
/// Owned by one worker thread (not `Sendable`, like its handle).
final class CurlHTTPPoster {
    /// The most of an answer's body kept (a provider's JSON error is far smaller).
    static let bodyLimit = 64 * 1024

    private let timeout: Int
    private let caFile: String?
    private var handle: CurlEasyHandle?

    init(timeout: Int64, caFile: String? = nil) {
        self.timeout = Int(max(1, timeout))
        self.caFile = caFile
    }

    /// POSTs `body` to `url` with `headers` (`Name: value` lines), with HTTP Basic `credentials`
    /// when given (never logged: curl sends them, the answer never holds them).
    func post(url: String, headers: [String], body: String, credentials: (user: String, password: String)? = nil) -> CurlHTTPAnswer {
        let sink = ResponseSink()
        do {
            let handle = try self.handle ?? CurlEasyHandle()
            self.handle = handle
            try handle.set(CURLOPT_URL, url)
            try handle.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try handle.set(CURLOPT_FOLLOWLOCATION, 0)
            try handle.set(CURLOPT_TIMEOUT, timeout)
            try handle.set(CURLOPT_CONNECTTIMEOUT, min(timeout, 10))
            if let caFile { try handle.set(CURLOPT_CAINFO, caFile) }
            if let credentials {
                try handle.set(CURLOPT_HTTPAUTH, 1)  // CURLAUTH_BASIC (a cast macro Swift does not import)
                try handle.set(CURLOPT_USERNAME, credentials.user)
                try handle.set(CURLOPT_PASSWORD, credentials.password)
            } else {
                try handle.set(CURLOPT_HTTPAUTH, 0)  // CURLAUTH_NONE
            }
            try handle.set(CURLOPT_POST, 1)
            // The bodies are text without NUL, so curl's strlen of the copied string is their length.
            try handle.set(CURLOPT_COPYPOSTFIELDS, body)
            try handle.setHeaders(headers + ["Expect:"])
            try handle.setWriteFunction(curlCollectResponse)
            try withExtendedLifetime(sink) {
                try handle.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(sink).toOpaque())
                try handle.perform()
            }
            try handle.set(CURLOPT_WRITEDATA, pointer: nil)
            return CurlHTTPAnswer(
                status: handle.responseCode, retryAfter: WebhookResponse.retryAfterSeconds(handle.responseHeader("Retry-After")),
                body: sink.bytes, failure: nil)
        } catch {
            // A failed handle may hold a broken connection: the next call starts afresh.
            handle = nil
            return CurlHTTPAnswer(status: 0, retryAfter: nil, body: [], failure: "\(error)")
        }
    }
}

/// The answer's body as it arrives, up to ``CurlHTTPPoster/bodyLimit``.
private final class ResponseSink {
    var bytes: [UInt8] = []
}

private func curlCollectResponse(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let buffer, let context else { return length }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let room = max(0, CurlHTTPPoster.bodyLimit - sink.bytes.count)
    if room > 0 {
        buffer.withMemoryRebound(to: UInt8.self, capacity: length) { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, length))) }
    }
    return length
}
