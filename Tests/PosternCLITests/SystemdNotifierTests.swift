import Foundation
import PosternAssembly
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify over a real AF_UNIX datagram socket, bound here as systemd binds its own: a file
/// path and an abstract (`@`) name, each receiving exactly the datagram sent.
@Suite("systemd notification")
struct SystemdNotifierTests {
    /// A datagram socket bound to `address` (`@name` abstract), with a receive timeout so that a
    /// datagram that never comes fails the test instead of hanging it.
    final class Receiver {
        let descriptor: Int32

        init(address: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.EIO) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var socketAddress = sockaddr_un()
            socketAddress.sun_family = sa_family_t(AF_UNIX)
            var path = Array(address.utf8)
            let abstract = path.first == UInt8(ascii: "@")
            if abstract { path[0] = 0 }
            withUnsafeMutableBytes(of: &socketAddress.sun_path) { bytes in
                for (index, byte) in path.enumerated() { bytes[index] = byte }
            }
            let length = 2 + path.count + (abstract ? 0 : 1)
            let bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(length)) }
            }
            guard bound == 0 else {
                close(descriptor)
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        deinit { close(descriptor) }

        /// The next datagram, or nil after the timeout.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }

    @Test("READY=1 and STOPPING=1 reach a socket file named by NOTIFY_SOCKET, one datagram each")
    func socketFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notify").path
        let receiver = try Receiver(address: path)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": path]))
        try notifier.notify("READY=1\nSTATUS=listening on 127.0.0.1:8080")
        try notifier.notify("STOPPING=1")
        #expect(receiver.receive() == "READY=1\nSTATUS=listening on 127.0.0.1:8080")
        #expect(receiver.receive() == "STOPPING=1")
    }

    @Test("an @ address is Linux's abstract namespace: a NUL byte, then the name, no terminator")
    func abstractAddress() throws {
        let name = "@postern-notify-test-\(UUID().uuidString)"
        let receiver = try Receiver(address: name)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]))
        try notifier.notify("READY=1")
        #expect(receiver.receive() == "READY=1")
    }

    @Test("without NOTIFY_SOCKET there is no notifier: serve outside systemd sends nothing")
    func outsideSystemd() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
    }

    @Test("an address that is neither a path nor @name, or a socket nobody binds, is an error naming the call")
    func unusableAddresses() throws {
        let relative = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "run/notify"]))
        #expect(throws: SystemdNotifyError.self) { try relative.notify("READY=1") }
        let nobody = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify-\(UUID().uuidString)"]))
        let error = #expect(throws: SystemdNotifyError.self) { try nobody.notify("READY=1") }
        #expect(error?.call == "sendto")
        let long = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 200)]))
        #expect(throws: SystemdNotifyError.self) { try long.notify("READY=1") }
    }
}
