import Foundation
import PosternCore
@testable import PosternServer
@testable import PosternStore
import PosternTestSupport
import Synchronization
import Testing

/// Requests answered from the commit of their write (`APIRouter.handleLater`, `HTTPServer`'s
/// `later`): over a real SQLite file, the answer is the one `handle` gives, it comes once the write
/// is committed, and no limit or check is skipped on the way.
@Suite("Answering from the commit")
struct AnswerFromCommitTests {
    /// A router over a fresh SQLite file.
    struct Fixture {
        let directory: URL
        let store: SQLiteStore
        let router: APIRouter

        init(ipPerMinute: Int64 = 0, configure: (inout Settings) -> Void = { _ in }) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-later-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory.appendingPathComponent("postern.db").path)
            router = try RouterTests.router(over: store, keysIn: store, ipPerMinute: ipPerMinute, configure: configure).router
        }

        func queued() throws -> Int { try store.read { try $0.outboxCounts()[.queued] } }
    }

    /// What one `handleLater` call came to: whether it took the request, whether the answer had
    /// come before it returned, and the answer.
    struct Later {
        let taken: Bool
        let answeredBeforeReturn: Bool
        let response: HTTPResponse?
        /// Outbox rows queued, read from another connection when the answer arrived.
        let queuedWhenAnswered: Int?
    }

    static func later(_ fixture: Fixture, _ request: HTTPRequest) -> Later {
        let answer = Mutex<(HTTPResponse, Int?)?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let store = fixture.store
        let taken = fixture.router.handleLater(request) { response in
            let queued = try? store.read { try $0.outboxCounts()[.queued] }
            answer.withLock { $0 = (response, queued) }
            arrived.signal()
        }
        let early = answer.withLock { $0 != nil }
        if taken { _ = arrived.wait(timeout: .now() + 10) }
        let got = answer.withLock { $0 }
        return Later(taken: taken, answeredBeforeReturn: early, response: got?.0, queuedWhenAnswered: got?.1)
    }

    static func send(_ email: String, ip: String = "192.0.2.1", contentType: String = "application/json") -> HTTPRequest {
        RouterTests.request("POST", "/v1/email-link/send", body: #"{"email":"\#(email)"}"#, contentType: contentType, ip: ip)
    }

    @Test("send-link over SQLite is taken, answered 202 once its request and mail are committed, the same answer handle gives")
    func answeredFromCommit() throws {
        let fixture = try Fixture()
        // One address has an account, the others none: the answers must not tell them apart.
        let known = try EmailAddress.parse("known@example.com")
        try fixture.store.write { try $0.insertAccount(Account(uid: "u-known", email: known, emailVerified: true, createdAt: 1)) }
        let first = Self.later(fixture, Self.send("known@example.com"))
        #expect(first.taken)
        #expect(first.response?.status == 202)
        // Answered from the commit: another connection already sees the queued mail.
        #expect(first.queuedWhenAnswered == 1)
        let second = Self.later(fixture, Self.send("other@example.com"))
        #expect(second.queuedWhenAnswered == 2)
        // The blocking path answers the same bytes (the answer says nothing about the address).
        let blocking = fixture.router.handle(Self.send("third@example.com"))
        #expect(blocking.status == first.response?.status)
        #expect(blocking.body == first.response?.body && blocking.body == second.response?.body)
        #expect(blocking.headers.map(\.0) == first.response?.headers.map(\.0))
        #expect(try fixture.queued() == 3)
    }

    static func reset(_ email: String, ip: String = "192.0.2.1") -> HTTPRequest {
        RouterTests.request("POST", "/v1/password/reset", body: #"{"email":"\#(email)"}"#, ip: ip)
    }

    @Test("a password reset over SQLite is taken too, answered 202 once its mail is committed, known or not, as handle answers; the per-address limit holds")
    func passwordResetFromCommit() throws {
        let fixture = try Fixture { $0.mailInterval = 60 }
        let known = try EmailAddress.parse("known@example.com")
        try fixture.store.write { try $0.insertAccount(Account(uid: "u-known", email: known, emailVerified: true, createdAt: 1)) }
        let first = Self.later(fixture, Self.reset("known@example.com"))
        #expect(first.taken && first.response?.status == 202)
        #expect(first.queuedWhenAnswered == 1)
        let unknown = Self.later(fixture, Self.reset("nobody@example.com"))
        #expect(unknown.taken && unknown.queuedWhenAnswered == 2)
        #expect(unknown.response?.body == first.response?.body)
        #expect(unknown.response?.headers.map(\.0) == first.response?.headers.map(\.0))
        let blocking = fixture.router.handle(Self.reset("third@example.com"))
        #expect(blocking.status == 202 && blocking.body == first.response?.body)
        // Again at once for the same address, from another client: 429, nothing more queued.
        let again = Self.later(fixture, Self.reset("known@example.com", ip: "192.0.2.9"))
        #expect(again.taken && again.response?.status == 429)
        #expect(again.response.map(RouterTests.errorCode) == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // Bad input is answered before anything is written.
        let bad = Self.later(fixture, Self.reset("not an address"))
        #expect(bad.taken && bad.answeredBeforeReturn && bad.response?.status == 400)
        #expect(try fixture.queued() == 3)
    }

    @Test("every other request is left to handle: other routes and methods, unknown paths, and send-link over a store without a writer of its own")
    func leavesTheRest() throws {
        let fixture = try Fixture()
        for request in [
            RouterTests.request("POST", "/v1/email-link/complete", body: #"{"oobCode":"x"}"#),
            RouterTests.request("GET", "/v1/email-link/send"),
            RouterTests.request("GET", "/healthz"),
            RouterTests.request("POST", "/v1/nothing-here", body: "{}"),
        ] {
            let later = Self.later(fixture, request)
            #expect(!later.taken && later.response == nil, "\(request.method) \(request.path)")
        }
        let memory = try RouterTests.harness()
        let answered = Mutex(false)
        #expect(!memory.router.handleLater(Self.send("a@example.com")) { _ in answered.withLock { $0 = true } })
        #expect(!answered.withLock { $0 })
    }

    @Test("the limits hold on this path: past the per-IP and the per-address limit the answer is 429 and nothing more is queued")
    func limitsHold() throws {
        let perIP = try Fixture(ipPerMinute: 2)
        #expect(Self.later(perIP, Self.send("a@example.com")).response?.status == 202)
        #expect(Self.later(perIP, Self.send("b@example.com")).response?.status == 202)
        let limited = Self.later(perIP, Self.send("c@example.com"))
        #expect(limited.taken && limited.response?.status == 429)
        #expect(limited.response.flatMap { RouterTests.header($0, "Retry-After") } != nil)
        #expect(try perIP.queued() == 2)
        #expect(Self.later(perIP, Self.send("c@example.com", ip: "192.0.2.2")).response?.status == 202)

        let perAddress = try Fixture { $0.mailInterval = 60 }
        #expect(Self.later(perAddress, Self.send("victim@example.com")).response?.status == 202)
        // The same address again at once, from another client: refused in the same write that
        // would have queued it, and answered from that write's commit.
        let again = Self.later(perAddress, Self.send("victim@example.com", ip: "192.0.2.9"))
        #expect(again.response?.status == 429)
        #expect(again.response.map(RouterTests.errorCode) == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try perAddress.queued() == 1)
        #expect(Self.later(perAddress, Self.send("someone-else@example.com")).response?.status == 202)
    }

    @Test("bad input is answered before anything is written, as handle answers it: 415, a missing field, a malformed address")
    func badInputAtOnce() throws {
        let fixture = try Fixture()
        let requests = [
            Self.send("a@example.com", contentType: "text/plain"),
            RouterTests.request("POST", "/v1/email-link/send", body: #"{"mail":"a@example.com"}"#),
            Self.send("not an address"),
        ]
        for request in requests {
            let later = Self.later(fixture, request)
            #expect(later.taken && later.answeredBeforeReturn)
            let blocking = fixture.router.handle(request)
            #expect(later.response?.status == blocking.status && later.response?.body == blocking.body)
            #expect([400, 415].contains(blocking.status))
        }
        #expect(try fixture.queued() == 0)
    }

    @Test("a closed store answers 503 on this path; nothing waits for a commit that will not come")
    func closedStore() throws {
        let fixture = try Fixture()
        fixture.store.close()
        let later = Self.later(fixture, Self.send("a@example.com"))
        #expect(later.taken && later.response?.status == 503)
        #expect(later.response.map(RouterTests.errorCode) == "UNAVAILABLE")
    }

    @Test("the HTTP server: what later takes is answered from another thread, what it leaves goes to a worker, and stopping waits for a taken request")
    func serverAnswersLater() throws {
        let port = try Self.freePort()
        let pending = Mutex<[(@Sendable (HTTPResponse) -> Void)]>([])
        let server = try HTTPServer(
            listen: "127.0.0.1:\(port)", threads: 2, workers: 2,
            later: { request, reply in
                guard request.path == "/later" else { return false }
                pending.withLock { $0.append(reply) }
                return true
            }
        ) { request in HTTPResponse(status: 200, body: Array("worker \(request.path)".utf8)) }
        // Answered by a worker: later left it.
        #expect(try Self.post(port, "/elsewhere").hasSuffix("worker /elsewhere"))
        // Taken: no answer until the reply is called from another thread, 300 ms later.
        let answer = Mutex<String?>(nil)
        let client = Thread { answer.withLock { $0 = try? Self.post(port, "/later") } }
        client.start()
        #expect(eventually { !pending.withLock { $0.isEmpty } })
        #expect(pending.withLock { $0.count } == 1)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            for reply in pending.withLock({ $0 }) { reply(HTTPResponse(status: 200, body: Array("from the commit".utf8))) }
        }
        let started = ContinuousClock.now
        server.stop()
        // stop() waited for the taken request (libmicrohttpd must not stop with it suspended).
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(eventually { answer.withLock { $0 } != nil })
        #expect(answer.withLock { $0 }?.hasSuffix("from the commit") == true)
    }

    static func freePort() throws -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileNoSuchFile) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// One POST with an empty body on a new connection; the whole answer as text.
    static func post(_ port: UInt16, _ path: String) throws -> String {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw CocoaError(.fileReadUnknown) }
        let request = Array("POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
