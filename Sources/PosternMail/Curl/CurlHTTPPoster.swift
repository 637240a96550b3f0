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
    /// The `Cache-Control` header, if any.
    var cacheControl: String? = nil
}

/// POSTs over one libcurl easy handle, so its user reuses the connection: the webhook worker, the
/// HTTP mail provider and the SMS transports. Follows no redirect, speaks only http and https,
/// uses no proxy, checks certificates (an extra CA file may be given), gives each call `timeout`
/// seconds, connecting included, and opens a connection only to an address `targets` allows
/// (checked on the address resolved, as curl opens the socket: a name that resolves to loopback
/// or a private range, or that changes its answer between a check and the connect, is refused).
/// Identity providers' requests (``CurlProviderHTTP``) GET as well, speak only https, take no
/// address policy (the operator names those servers) and refuse a body over their limit.
///
/// Owned by one worker thread (not `Sendable`, like its handle).
final class CurlHTTPPoster {
    /// The most of an answer's body kept (a provider's JSON error is far smaller).
    static let bodyLimit = 64 * 1024

    /// Milliseconds a whole transfer may take, and its connection.
    private let timeout: Int
    private let connectTimeout: Int
    private let caFile: String?
    private let protocols: String
    /// The longest body taken: nil keeps the first ``bodyLimit`` bytes, a number refuses more.
    private let longestBody: Int?
    private var handle: CurlEasyHandle?
    /// The open-socket callback's context; lives as long as the poster, so as every handle.
    private let connectGuard: ConnectGuard

    /// `targets` nil: any address (identity providers, which the operator names); `connectTimeout`
    /// nil: the lesser of `timeout` and 10 s; `httpsOnly`: curl speaks no other protocol;
    /// `longestBody`: a longer answer fails the transfer instead of being cut; `timeoutMilliseconds`:
    /// a deadline finer than `timeout`'s seconds, which it replaces (the hooks').
    init(
        timeout: Int64, caFile: String? = nil, targets: TargetAddressPolicy?, connectTimeout: Int64? = nil, httpsOnly: Bool = false,
        longestBody: Int? = nil, timeoutMilliseconds: Int64? = nil
    ) {
        let whole = max(1, timeoutMilliseconds ?? max(1, timeout) * 1000)
        self.timeout = Int(whole)
        self.connectTimeout = Int(max(1, min(whole, (connectTimeout ?? 10) * 1000)))
        self.caFile = caFile
        protocols = httpsOnly ? "https" : "http,https"
        self.longestBody = longestBody
        connectGuard = ConnectGuard(targets)
    }

    /// POSTs `body` to `url` with `headers` (`Name: value` lines), with HTTP Basic `credentials`
    /// when given (never logged: curl sends them, the answer never holds them).
    func post(url: String, headers: [String], body: String, credentials: (user: String, password: String)? = nil) -> CurlHTTPAnswer {
        transfer(url: url, headers: headers, body: body, credentials: credentials)
    }

    /// GETs `url` with `headers`.
    func get(url: String, headers: [String]) -> CurlHTTPAnswer { transfer(url: url, headers: headers, body: nil, credentials: nil) }

    /// One transfer: a POST of `body`, or a GET when it is nil.
    private func transfer(url: String, headers: [String], body: String?, credentials: (user: String, password: String)?) -> CurlHTTPAnswer {
        let sink = ResponseSink(limit: longestBody ?? Self.bodyLimit, refusesMore: longestBody != nil)
        do {
            let handle = try self.handle ?? CurlEasyHandle()
            self.handle = handle
            try handle.set(CURLOPT_URL, url)
            try handle.set(CURLOPT_PROTOCOLS_STR, protocols)
            try handle.set(CURLOPT_FOLLOWLOCATION, 0)
            // A proxy would be the address connected to, and would resolve the target itself,
            // out of the address check's reach (an http_proxy in the environment included).
            try handle.set(CURLOPT_PROXY, "")
            try handle.setOpenSocketFunction(curlOpenCheckedSocket)
            try handle.set(CURLOPT_OPENSOCKETDATA, pointer: Unmanaged.passUnretained(connectGuard).toOpaque())
            connectGuard.refused = nil
            connectGuard.opened = 0
            try handle.set(CURLOPT_TIMEOUT_MS, timeout)
            try handle.set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeout)
            if let caFile { try handle.set(CURLOPT_CAINFO, caFile) }
            if let credentials {
                try handle.set(CURLOPT_HTTPAUTH, 1)  // CURLAUTH_BASIC (a cast macro Swift does not import)
                try handle.set(CURLOPT_USERNAME, credentials.user)
                try handle.set(CURLOPT_PASSWORD, credentials.password)
            } else {
                try handle.set(CURLOPT_HTTPAUTH, 0)  // CURLAUTH_NONE
            }
            if let body {
                try handle.set(CURLOPT_POST, 1)
                // The bodies are text without NUL, so curl's strlen of the copied string is their length.
                try handle.set(CURLOPT_COPYPOSTFIELDS, body)
            } else {
                try handle.set(CURLOPT_HTTPGET, 1)
            }
            try handle.setHeaders(headers + ["Expect:"])
            try handle.setWriteFunction(curlCollectResponse)
            try withExtendedLifetime(sink) {
                try handle.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(sink).toOpaque())
                try handle.perform()
            }
            try handle.set(CURLOPT_WRITEDATA, pointer: nil)
            return CurlHTTPAnswer(
                status: handle.responseCode, retryAfter: WebhookResponse.retryAfterSeconds(handle.responseHeader("Retry-After")),
                body: sink.bytes, failure: nil, cacheControl: handle.responseHeader("Cache-Control"))
        } catch {
            // A failed handle may hold a broken connection: the next call starts afresh.
            handle = nil
            // Every address refused says so, not curl's "Couldn't connect" (which names the host
            // and port of the URL, never its path or query); once one was allowed, curl's error
            // is about that one.
            let refused = connectGuard.opened == 0 ? connectGuard.refused : nil
            var failure = refused.map { "not sent: " + TargetAddressPolicy.explanation(address: $0.address, kind: $0.kind) }
            if sink.overflowed { failure = "the answer is longer than \(sink.limit / 1024) KiB" }
            return CurlHTTPAnswer(status: 0, retryAfter: nil, body: [], failure: failure ?? "\(error)")
        }
    }
}

/// What the open-socket callback checks against, and the last address it refused. Used by the
/// one thread that runs the poster's transfers.
private final class ConnectGuard {
    /// nil: every address is allowed.
    let targets: TargetAddressPolicy?
    var refused: (address: IPAddress, kind: String)?
    /// Sockets opened for allowed addresses during the transfer.
    var opened = 0

    init(_ targets: TargetAddressPolicy?) { self.targets = targets }
}

/// CURLOPT_OPENSOCKETFUNCTION: the socket for an address the policy allows, else CURL_SOCKET_BAD
/// (curl then tries the name's next address, or fails with CURLE_COULDNT_CONNECT).
private func curlOpenCheckedSocket(
    _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    guard let context, let address else { return postern_curl_socket_bad() }
    let check = Unmanaged<ConnectGuard>.fromOpaque(context).takeUnretainedValue()
    var raw = [UInt8](repeating: 0, count: 16)
    let count = Int(postern_curl_sockaddr_bytes(address, &raw))
    // Another family (a Unix socket) is never a target here.
    guard let ip = IPAddress(networkBytes: Array(raw.prefix(count))) else { return postern_curl_socket_bad() }
    if let kind = check.targets?.refusal(of: ip) {
        check.refused = (ip, kind)
        return postern_curl_socket_bad()
    }
    check.opened += 1
    return postern_curl_open_socket(address)
}

/// The answer's body as it arrives, up to `limit` bytes: the rest is dropped, or, when
/// `refusesMore`, ends the transfer (curl then fails with a write error).
private final class ResponseSink {
    let limit: Int
    let refusesMore: Bool
    var bytes: [UInt8] = []
    /// Whether the transfer was ended for a body over `limit`.
    var overflowed = false

    init(limit: Int, refusesMore: Bool) {
        self.limit = limit
        self.refusesMore = refusesMore
    }
}

private func curlCollectResponse(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let buffer, let context else { return length }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    if sink.refusesMore, sink.bytes.count + length > sink.limit {
        sink.overflowed = true
        return 0
    }
    let room = max(0, sink.limit - sink.bytes.count)
    if room > 0 {
        buffer.withMemoryRebound(to: UInt8.self, capacity: length) { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, length))) }
    }
    return length
}
