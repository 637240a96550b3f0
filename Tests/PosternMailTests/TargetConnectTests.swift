import Foundation
import PosternCore
@testable import PosternMail
import Testing

/// The connect-time half of the SSRF guard: a name that resolves to loopback (`localhost`) passes
/// every check of the URL's text, so the address curl is about to connect to is checked.
@Suite("Outgoing HTTP connects only where the target policy allows")
struct TargetConnectTests {
    /// A listener on 127.0.0.1 that answers each connection `204 No Content` and counts them.
    final class Listener: @unchecked Sendable {  // `accepted` is guarded by `lock`.
        let port: UInt16
        private let fd: Int32
        private let lock = NSLock()
        private var count = 0
        /// Signalled when the accepting thread has returned: only then is the descriptor closed,
        /// so its number cannot be reused by another listener while this thread still accepts on
        /// it (a stopped listener's thread once took, and counted, the next test's connection).
        private let ended = DispatchSemaphore(value: 0)
        var accepted: Int { lock.withLock { count } }

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw CocoaError(.fileWriteUnknown) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            self.fd = fd
            port = UInt16(bigEndian: address.sin_port)
            let thread = Thread { [self] in serve() }
            thread.start()
        }

        private func serve() {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    ended.signal()
                    return
                }
                lock.withLock { count += 1 }
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(client, &buffer, buffer.count)
                let answer = Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                _ = write(client, answer, answer.count)
                close(client)
            }
        }

        func stop() {
            shutdown(fd, Int32(SHUT_RDWR))
            ended.wait()
            close(fd)
        }
    }

    @Test("a name resolving to loopback, and loopback itself, are refused before any connection, the reply naming the address and not the URL")
    func refusedAtConnect() throws {
        let listener = try Listener()
        defer { listener.stop() }
        let poster = CurlHTTPPoster(timeout: 5, targets: TargetAddressPolicy())
        for host in ["localhost", "127.0.0.1", "0x7f000001"] {
            let answer = poster.post(url: "http://\(host):\(listener.port)/hooks/s3cr3t?token=t0k3n", headers: [], body: "{}")
            #expect(answer.status == 0)
            let failure = try #require(answer.failure)
            #expect(failure.contains("is a loopback address") && failure.contains("--allow-private-targets"), "\(failure)")
            #expect(!failure.contains("s3cr3t") && !failure.contains("t0k3n"))
        }
        #expect(listener.accepted == 0, "a refused target was connected to")
        // The webhook transport says the same, as a transient failure with that reply.
        let response = CurlWebhookTransport(timeout: 5, targets: TargetAddressPolicy())
            .post(url: "http://localhost:\(listener.port)/in", headers: WebhookSignedHeaders(id: "msg_1", timestamp: 1, body: "{}", secrets: []), body: "{}")
        #expect(response.status == 0 && response.reply.contains("is a loopback address"))
        #expect(listener.accepted == 0)
    }

    @Test("listed in --allow-private-targets, the same target is reached")
    func allowedWhenListed() throws {
        let listener = try Listener()
        defer { listener.stop() }
        let poster = CurlHTTPPoster(timeout: 5, targets: TargetAddressPolicy(allowing: try IPNetwork.list("127.0.0.1/32")))
        let answer = poster.post(url: "http://localhost:\(listener.port)/in", headers: [], body: "{}")
        #expect(answer.failure == nil && answer.status == 204, "\(answer.failure ?? "")")
        #expect(listener.accepted == 1)
    }
}
