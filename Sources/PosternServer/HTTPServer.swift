internal import CMicroHTTPD
import Foundation
import PosternAPI
import PosternCore
import Synchronization

/// Why the HTTP server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for the operator.
    public let description: String
}

/// An HTTP server on libmicrohttpd: an internal thread pool on epoll, a connection limit, a
/// per-IP connection cap, a deadline for each whole request besides the inactivity timeout (so
/// slow clients can hold neither threads nor every connection; see `RequestDeadlines`), 413 for
/// bodies over 64 KiB, 400 and a closed connection for a body whose length is stated two ways or
/// a header name with whitespace before its colon (see `RequestHeaders`), keep-alive. GET and HEAD are answered by `handler` on one of the pool's threads; the other
/// methods, which wait for a store commit, while their connection is suspended: by `later` where it
/// takes the request (it answers from the commit, on the store's writer thread, and no thread
/// waits), else on one of `workers` threads (see `RequestWorkers`).
public final class HTTPServer: Sendable {
    /// Largest request body accepted.
    public static let maximumBodySize = 64 * 1024

    /// Memory per connection for the request line, headers and read buffer (libmicrohttpd's
    /// default). A body arrives in chunks, so it need not fit. libmicrohttpd zeroes this memory
    /// for every request: at 128 KiB that memset was a fifth of a `/healthz` answer's cost.
    static let connectionMemory = 32 * 1024

    /// Answers one request; called concurrently from the pool's threads.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Takes a request it can answer without blocking (true: it calls the reply once, from any
    /// thread) or leaves it (false, without calling it). Called from the pool's threads.
    public typealias LaterHandler = @Sendable (HTTPRequest, @escaping @Sendable (HTTPResponse) -> Void) -> Bool

    private let daemon: Daemon
    private let context: Unmanaged<HandlerBox>
    private let workers: RequestWorkers?
    private let deadlines: RequestDeadlines?
    private let suspensions: SuspendedRequests

    /// Starts listening on `listen` (`HOST:PORT`, IPv4) with `threads` polling threads and, when
    /// `workers` is above 0, that many threads for the requests that are not GET or HEAD.
    /// `connectionsPerIP` caps one socket peer's connections (0: no cap); `requestTimeoutSeconds`
    /// above 0 gives each request that long to arrive whole; `connectionTimeoutSeconds` is
    /// libmicrohttpd's inactivity timeout; `onDeadlineCut` hears how many late connections each
    /// round of the deadline watchdog cut. `later` is offered each request that is not GET or
    /// HEAD first (only with workers, which answer what it leaves).
    /// - Throws: `HTTPServerError` when the address is malformed or cannot be bound.
    public init(
        listen: String, threads: Int = 4, workers workerCount: Int = 0, connectionLimit: Int = 1024,
        connectionsPerIP: Int = 0, requestTimeoutSeconds: Int = 0, connectionTimeoutSeconds: Int = 30,
        onDeadlineCut: @escaping @Sendable (Int) -> Void = { _ in }, later: LaterHandler? = nil, handler: @escaping Handler
    ) throws {
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw HTTPServerError(description: "listen address \(listen) is not HOST:PORT")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        let host = listen[..<colon] == "localhost" ? "127.0.0.1" : String(listen[..<colon])
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError(description: "listen host \(host) is not an IPv4 address")
        }
        let workers = workerCount > 0 ? RequestWorkers(count: workerCount) : nil
        let deadlines = requestTimeoutSeconds > 0 ? RequestDeadlines(timeoutSeconds: requestTimeoutSeconds) : nil
        let suspensions = SuspendedRequests(later)
        let box = Unmanaged.passRetained(HandlerBox(handler, workers: workers, deadlines: deadlines, suspensions: suspensions))
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                postern_mhd_start(
                    flags, port, sockaddrPointer, accessHandler, box.toOpaque(), requestCompleted, box.toOpaque(),
                    deadlines == nil ? nil : connectionNotified, box.toOpaque(),
                    UInt32(threads), UInt32(connectionLimit), UInt32(max(connectionsPerIP, 0)),
                    UInt32(connectionTimeoutSeconds), Self.connectionMemory)
            }
        }
        guard let started else {
            let reason = String(cString: strerror(errno))
            workers?.close()
            box.release()
            throw HTTPServerError(description: "cannot listen on \(listen): \(reason)")
        }
        daemon = Daemon(started)
        context = box
        self.workers = workers
        self.deadlines = deadlines
        self.suspensions = suspensions
        deadlines?.start(onCut: onDeadlineCut)
    }

    /// Stops accepting, finishes requests in flight, and frees the daemon. The requests whose
    /// connections are suspended are answered and their answers sent first (see
    /// `SuspendedRequests`); the deadline watchdog ends last, when no connection is left for it
    /// to cut.
    public func stop() {
        finishSuspended()
        daemon.stop()
        deadlines?.stop()
    }

    deinit {
        finishSuspended()
        daemon.stop()
        deadlines?.stop()
        context.release()
    }
}

extension HTTPServer {
    /// Offers nothing more to `later`, lets the workers answer what they hold, and waits until
    /// every suspended request's answer is sent (or its connection gone).
    fileprivate func finishSuspended() {
        suspensions.close()
        workers?.close()
        suspensions.waitForAnswers()
    }
}

/// Owns the `MHD_Daemon`. `@unchecked Sendable`: the pointer is only passed to MHD_stop_daemon,
/// once, under the lock.
private final class Daemon: @unchecked Sendable {
    private var pointer: OpaquePointer?
    private let lock = NSLock()
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        if let pointer { MHD_stop_daemon(pointer) }
        pointer = nil
    }
}

/// The handler, passed to C as the callback context.
private final class HandlerBox: Sendable {
    let handler: HTTPServer.Handler
    let workers: RequestWorkers?
    let deadlines: RequestDeadlines?
    let suspensions: SuspendedRequests
    init(_ handler: @escaping HTTPServer.Handler, workers: RequestWorkers?, deadlines: RequestDeadlines?, suspensions: SuspendedRequests) {
        self.handler = handler
        self.workers = workers
        self.deadlines = deadlines
        self.suspensions = suspensions
    }

    /// The connection's deadline, kept in its socket context from open to close.
    func deadline(of connection: OpaquePointer?) -> ConnectionDeadline? {
        guard deadlines != nil, let raw = postern_mhd_socket_context(connection) else { return nil }
        return Unmanaged<ConnectionDeadline>.fromOpaque(raw).takeUnretainedValue()
    }
}

/// One request's upload, kept in `*req_cls` between calls. Used by one connection's thread.
private final class UploadState {
    /// Read once, on the first call, when the header block is complete.
    var headers = RequestHeaders()
    var body: [UInt8] = []
    var tooLarge = false
    /// Set when the request went to a worker; holds its answer once the connection is resumed.
    var answer: WorkerAnswer?
}

/// A worker's answer, handed back to the connection's polling thread.
private final class WorkerAnswer: Sendable {
    private let response = Mutex<HTTPResponse?>(nil)
    func set(_ value: HTTPResponse) { response.withLock { $0 = value } }
    func take() -> HTTPResponse? { response.withLock { $0.take() } }
}

/// The requests whose connection is suspended while they are answered (by the `later` handler or
/// a worker), counted from the suspension until libmicrohttpd reports the request completed (its
/// answer sent, or the connection gone), so that stopping waits until their answers are out:
/// libmicrohttpd must not be stopped with a connection suspended, and one stopped just after a
/// resume dropped the answer it had not sent yet.
private final class SuspendedRequests: Sendable {
    /// Longest wait at a stop for the answers still going out (new requests on open keep-alive
    /// connections keep coming while they do).
    static let stopTimeout: TimeInterval = 5
    private let later: HTTPServer.LaterHandler?
    /// Taken only to wait at a stop, and to wake that wait when the count reaches 0: the count
    /// and the flag are atomics, so a request takes no lock on its way (3 per request before).
    private let condition = NSCondition()
    private let suspended = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    init(_ later: HTTPServer.LaterHandler?) { self.later = later }

    /// A connection was suspended for its request; ``completed()`` follows.
    func began() {
        suspended.add(1, ordering: .sequentiallyConsistent)
    }

    /// A request whose connection had been suspended is complete.
    func completed() {
        guard suspended.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
        // Under the lock: a stop checking the count (under it) is either before, and then waiting
        // when this wakes it, or after, and sees 0.
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Offers `request` to the `later` handler; true when it took it (it then calls `reply`
    /// once). False once closing, or when there is none or it leaves the request.
    func offer(_ request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        guard let later, !closed.load(ordering: .sequentiallyConsistent) else { return false }
        return later(request, reply)
    }

    /// Offers nothing more to the `later` handler.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
    }

    /// Waits until no request is suspended, at most ``stopTimeout``.
    func waitForAnswers() {
        let deadline = Date(timeIntervalSinceNow: Self.stopTimeout)
        condition.lock()
        while suspended.load(ordering: .sequentiallyConsistent) > 0, condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// A suspended connection, resumed by the worker that answered it. `@unchecked Sendable`:
/// libmicrohttpd allows `MHD_resume_connection` from any thread, once per suspension.
private struct SuspendedConnection: @unchecked Sendable {
    let connection: OpaquePointer?
    func resume() { MHD_resume_connection(connection) }
}

/// A query argument as libmicrohttpd hands it over (not decoded), percent-decoded once; bytes that
/// are not UTF-8 once decoded are replaced (U+FFFD), as `String(cString:)` did with what
/// libmicrohttpd decoded.
private func decodedArgument(_ text: UnsafePointer<CChar>) -> String { PercentDecoding.decodeRepairing(String(cString: text)) }

/// Every header line of the request, repeats included (a lookup by name would see only the first).
private func requestHeaders(_ connection: OpaquePointer?) -> RequestHeaders {
    let box = HeaderBox()
    withExtendedLifetime(box) {
        _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, { cls, _, key, value in
            guard let cls, let key else { return MHD_Result.YES }
            let box = Unmanaged<HeaderBox>.fromOpaque(cls).takeUnretainedValue()
            box.headers.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
            return MHD_Result.YES
        }, Unmanaged.passUnretained(box).toOpaque())
    }
    return box.headers
}

/// Collects header lines during `MHD_get_connection_values`. Used on one thread, within one call.
private final class HeaderBox {
    var headers = RequestHeaders()
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let context, let requestContext, let uploadSize else { return MHD_Result.NO }
    // First call, with the header block complete: refuse ambiguous framing before reading any of
    // the body, else make the upload state and wait for the body.
    guard let stateRaw = requestContext.pointee else {
        let state = UploadState()
        state.headers = requestHeaders(connection)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        if let conflict = state.headers.framingConflict {
            let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
            box.deadline(of: connection)?.answering()
            // Queued before the body is read, libmicrohttpd answers, reads nothing more and closes
            // (response.c: a response queued "early" sets discard_request); `Connection: close`
            // says so to the client.
            var response = HTTPResponse.error(400, code: .badRequest, message: conflict)
            response.headers.append(("Connection", "close"))
            return queue(response, on: connection)
        }
        return MHD_Result.YES
    }
    let state = Unmanaged<UploadState>.fromOpaque(stateRaw).takeUnretainedValue()
    if uploadSize.pointee > 0 {
        if let uploadData, !state.tooLarge {
            if state.body.count + uploadSize.pointee > HTTPServer.maximumBodySize {
                state.tooLarge = true
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                }
            }
        }
        uploadSize.pointee = 0
        return MHD_Result.YES
    }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    let handler = box.handler
    // The request has arrived whole: no deadline while it is answered (perhaps by a worker).
    box.deadline(of: connection)?.answering()
    // Resumed: a worker has answered.
    if let answer = state.answer {
        guard let response = answer.take() else { return MHD_Result.NO }
        return queue(response, on: connection)
    }
    let response: HTTPResponse
    if state.tooLarge {
        response = .error(413, code: .payloadTooLarge, message: "The request body is larger than 64 KiB.")
    } else {
        // microhttpd's `url` is the path alone, as it was sent: it cut the query off at the first
        // raw `?` (its arguments come below) and decodes nothing (`postern_mhd_keep_escapes`). An
        // encoded `?` stays in its segment: cutting at a decoded one answered
        // `/v1/phones/claims/ab%3Fcd/delete` 404 "no endpoint /v1/phones/claims/ab".
        let rawPath = url.map { String(cString: $0) } ?? "/"
        // The box must outlive the C call: an unretained temporary may be freed before the
        // callback runs (a use-after-free that crashed the daemon on requests with a query).
        let queryBox = QueryBox()
        withExtendedLifetime(queryBox) {
            _ = MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, { cls, _, key, value in
                guard let cls, let key else { return MHD_Result.YES }
                let box = Unmanaged<QueryBox>.fromOpaque(cls).takeUnretainedValue()
                box.values[decodedArgument(key)] = value.map(decodedArgument) ?? ""
                return MHD_Result.YES
            }, Unmanaged.passUnretained(queryBox).toOpaque())
        }
        let query = queryBox.values
        let path = PercentDecoding.decodeRepairing(rawPath)
        let request = HTTPRequest(
            method: method.map { String(cString: $0) } ?? "GET", path: path, rawPath: rawPath, query: query, headers: state.headers.values,
            body: state.body, clientIP: clientAddress(connection))
        if request.method != "GET", request.method != "HEAD", let workers = box.workers {
            let answer = WorkerAnswer()
            state.answer = answer
            let suspended = SuspendedConnection(connection: connection)
            box.suspensions.began()
            MHD_suspend_connection(connection)
            let reply: @Sendable (HTTPResponse) -> Void = { response in
                answer.set(response)
                suspended.resume()
            }
            if box.suspensions.offer(request, reply: reply) { return MHD_Result.YES }
            let job: @Sendable () -> Void = { reply(handler(request)) }
            if !workers.submit(job) { job() }
            return MHD_Result.YES
        }
        response = handler(request)
    }
    return queue(response, on: connection)
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer?) -> MHD_Result {
    let mhdResponse = response.body.withUnsafeBytes { bytes in
        postern_mhd_response_copy(bytes.count, bytes.baseAddress)
    }
    guard let mhdResponse else { return MHD_Result.NO }
    for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
    let queued = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    MHD_destroy_response(mhdResponse)
    return queued
}

/// Collects query arguments during `MHD_get_connection_values`. Used on one thread, within one call.
private final class QueryBox {
    var values: [String: String] = [:]
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    // The answer is sent (or the request abandoned): the next request's clock starts now.
    if let context {
        let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
        if let deadlines = box.deadlines {
            box.deadline(of: connection)?.awaitRequest(now: RequestDeadlines.now(), timeout: deadlines.timeout)
        }
    }
    guard let requestContext, let raw = requestContext.pointee else { return }
    let state = Unmanaged<UploadState>.fromOpaque(raw)
    if state.takeUnretainedValue().answer != nil, let context {
        Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue().suspensions.completed()
    }
    state.release()
    requestContext.pointee = nil
}

/// Opens and closes each connection's deadline. "Closed" comes before libmicrohttpd closes the
/// socket, which `RequestDeadlines` relies on.
private let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, socketContext, event in
    guard let context, let socketContext else { return }
    let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    guard let deadlines = box.deadlines else { return }
    // 0.9.75 imports these codes without names: MHD_CONNECTION_NOTIFY_STARTED is 0, _CLOSED 1.
    switch event.rawValue {
    case 0:
        let socket = postern_mhd_connection_socket(connection)
        guard socket >= 0 else { return }
        let deadline = deadlines.opened(socket: socket, now: RequestDeadlines.now())
        socketContext.pointee = Unmanaged.passRetained(deadline).toOpaque()
    case 1:
        guard let raw = socketContext.pointee else { return }
        let deadline = Unmanaged<ConnectionDeadline>.fromOpaque(raw)
        deadlines.closed(deadline.takeUnretainedValue())
        deadline.release()
        socketContext.pointee = nil
    default:
        break
    }
}

private func clientAddress(_ connection: OpaquePointer?) -> String {
    guard let address = postern_mhd_client_address(connection) else { return "" }
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    if address.pointee.sa_family == sa_family_t(AF_INET) {
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
            var addr = inet.pointee.sin_addr
            _ = inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
        }
    } else if address.pointee.sa_family == sa_family_t(AF_INET6) {
        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
            var addr = inet.pointee.sin6_addr
            _ = inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count))
        }
    }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
