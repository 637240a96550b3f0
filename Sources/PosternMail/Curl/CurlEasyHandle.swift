internal import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// `curl_global_init` once, before the first handle (it is not thread-safe; a global's
/// initializer runs exactly once).
private let curlGlobalInit: CURLcode = postern_curl_global_init()

/// One libcurl easy handle: the connection it caches, its options, and the callbacks' context.
///
/// Owned by one worker thread (not `Sendable`). The recipient and header lists and the error
/// buffer are stored here so they outlive every `perform()`, as curl requires.
final class CurlEasyHandle {
    private let handle: UnsafeMutableRawPointer
    private var recipients: UnsafeMutablePointer<curl_slist>?
    private var headers: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// A fresh handle with signals off (we are multi-threaded).
    /// - Throws: `CurlError` when libcurl cannot be initialized.
    init() throws(CurlError) {
        try CurlError.check(curlGlobalInit, detail: "curl_global_init")
        guard let raw = curl_easy_init() else { throw CurlError(CURLE_FAILED_INIT, detail: "curl_easy_init") }
        handle = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        // Every stored property is set: if these throw, deinit frees the handle and the buffer.
        try set(CURLOPT_NOSIGNAL, 1)
        try CurlError.check(postern_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
    }

    deinit {
        curl_easy_cleanup(handle)
        if let recipients { curl_slist_free_all(recipients) }
        if let headers { curl_slist_free_all(headers) }
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try CurlError.check(postern_curl_setopt_long(handle, option, value))
    }

    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        // curl copies string options (since 7.17), so the temporary C string may go.
        try CurlError.check(postern_curl_setopt_string(handle, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(CurlError) {
        try CurlError.check(postern_curl_setopt_ptr(handle, option, pointer))
    }

    /// Sets CURLOPT_MAIL_RCPT; the list is kept until replaced or the handle goes.
    func setRecipients(_ addresses: [String]) throws(CurlError) {
        let list = try Self.list(addresses)
        try CurlError.check(postern_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, list))
        if let recipients { curl_slist_free_all(recipients) }
        recipients = list
    }

    /// Sets CURLOPT_HTTPHEADER (`Name: value` lines); the list is kept until replaced or the handle goes.
    func setHeaders(_ lines: [String]) throws(CurlError) {
        let list = try Self.list(lines)
        try CurlError.check(postern_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list))
        if let headers { curl_slist_free_all(headers) }
        headers = list
    }

    /// A curl string list of `items`; the caller frees it.
    private static func list(_ items: [String]) throws(CurlError) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for item in items {
            guard let appended = curl_slist_append(list, item) else {
                if let list { curl_slist_free_all(list) }
                throw CurlError(CURLE_OUT_OF_MEMORY, detail: "curl_slist_append")
            }
            list = appended
        }
        return list
    }

    /// The last HTTP response's header `name` (its first occurrence), or nil.
    func responseHeader(_ name: String) -> String? {
        var header: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(handle, name, 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK, let value = header?.pointee.value
        else { return nil }
        return String(cString: value)
    }

    func setReadFunction(_ function: @escaping @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int)
        throws(CurlError)
    {
        try CurlError.check(postern_curl_setopt_read(handle, function))
    }

    func setWriteFunction(_ function: @escaping @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int)
        throws(CurlError)
    {
        try CurlError.check(postern_curl_setopt_write(handle, function))
    }

    func setDebugFunction(
        _ function: @escaping @convention(c) (UnsafeMutableRawPointer?, curl_infotype, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32
    ) throws(CurlError) {
        try CurlError.check(postern_curl_setopt_debug(handle, function))
    }

    func setOpenSocketFunction(
        _ function: @escaping @convention(c) (UnsafeMutableRawPointer?, curlsocktype, UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t
    ) throws(CurlError) {
        try CurlError.check(postern_curl_setopt_opensocket(handle, function))
    }

    /// Runs the transfer. - Throws: `CurlError` with the error buffer's detail.
    func perform() throws(CurlError) {
        errorBuffer[0] = 0
        let result = curl_easy_perform(handle)
        guard result != CURLE_OK else { return }
        throw CurlError(result, detail: String(cString: errorBuffer))
    }

    /// On a `CURLOPT_CONNECT_ONLY` connection, after `perform()`: sends `command` (through the
    /// connection's TLS, if any) and returns the first line of the answer, waiting for the socket
    /// at most `timeout` seconds at a time. curl says nothing itself on such a connection when it
    /// closes it (it takes it for dead): an SMTP session's QUIT is sent this way.
    /// - Throws: `CurlError` when sending or receiving fails or the socket stays silent.
    func converse(_ command: String, timeout: Int) throws(CurlError) -> String {
        var socket: curl_socket_t = -1
        try CurlError.check(postern_curl_getinfo_socket(handle, &socket), detail: "CURLINFO_ACTIVESOCKET")
        let bytes = Array(command.utf8)
        var offset = 0
        while offset < bytes.count {
            var sent = 0
            let result = bytes[offset...].withUnsafeBytes { curl_easy_send(handle, $0.baseAddress, $0.count, &sent) }
            if result == CURLE_AGAIN {
                try Self.wait(socket, for: Int16(POLLOUT), seconds: timeout)
                continue
            }
            try CurlError.check(result, detail: "curl_easy_send")
            offset += sent
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !answer.contains(0x0A), answer.count < 4096 {
            var received = 0
            let result = buffer.withUnsafeMutableBytes { curl_easy_recv(handle, $0.baseAddress, $0.count, &received) }
            if result == CURLE_AGAIN {
                try Self.wait(socket, for: Int16(POLLIN), seconds: timeout)
                continue
            }
            try CurlError.check(result, detail: "curl_easy_recv")
            if received == 0 { break }
            answer += buffer.prefix(received)
        }
        return String(decoding: answer.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
    }

    private static func wait(_ socket: curl_socket_t, for events: Int16, seconds: Int) throws(CurlError) {
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, Int32(seconds * 1000)) } while ready < 0 && errno == EINTR
        guard ready > 0 else { throw CurlError(CURLE_OPERATION_TIMEDOUT, detail: "the server did not answer in \(seconds) s") }
    }

    /// CURLINFO_RESPONSE_CODE: the last SMTP reply code or HTTP status (0 when none).
    var responseCode: Int {
        var code = 0
        _ = postern_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }
}

@available(*, unavailable)
extension CurlEasyHandle: Sendable {}
