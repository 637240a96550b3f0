import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing (sd_notify(3)) over the datagram socket systemd names in
/// `$NOTIFY_SOCKET`, for a `Type=notify` unit: `READY=1` once the listeners are up, `STOPPING=1`
/// when a stop begins. Outside systemd the variable is unset and there is no notifier: `serve`
/// behaves as before. A path is a socket file; a leading `@` is Linux's abstract namespace.
public struct SystemdNotifier: Sendable {
    /// The socket's address as `$NOTIFY_SOCKET` gives it (`/run/systemd/notify`, `@name`).
    public let address: String

    /// The notifier `$NOTIFY_SOCKET` in `environment` names, or nil when it is unset or empty
    /// (not started by systemd, or by a unit that is not `Type=notify`).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let address = environment["NOTIFY_SOCKET"], !address.isEmpty else { return nil }
        self.address = address
    }

    /// Sends one datagram of `NAME=value` lines (`READY=1`, `STOPPING=1`, `STATUS=…`).
    /// - Throws: ``SystemdNotifyError`` naming the call that failed and its errno, or the address
    ///   when it is neither an absolute path nor `@name`, or too long for a socket address.
    public func notify(_ state: String) throws(SystemdNotifyError) {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        guard abstract || path.first == UInt8(ascii: "/") else {
            throw SystemdNotifyError(call: "NOTIFY_SOCKET", detail: "\(address.debugDescription) is neither an absolute path nor @name")
        }
        // An abstract address starts with a NUL byte and is as long as its name, with no terminator.
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard path.count < capacity else {
            throw SystemdNotifyError(call: "NOTIFY_SOCKET", detail: "\(address.debugDescription) is longer than a socket address holds")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path).map { $0 + path.count + (abstract ? 0 : 1) }
            ?? MemoryLayout<sockaddr_un>.size
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemdNotifyError(call: "socket", errno: errno) }
        defer { close(descriptor) }
        let message = Array(state.utf8)
        var sent: Int
        repeat {
            sent = message.withUnsafeBytes { body in
                withUnsafePointer(to: &socketAddress) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        sendto(descriptor, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), address, socklen_t(length))
                    }
                }
            }
        } while sent < 0 && errno == EINTR
        guard sent >= 0 else { throw SystemdNotifyError(call: "sendto", errno: errno) }
    }
}

/// Why a notification did not reach systemd: the call and its errno (never the message, which is
/// a state and no secret, but has no place in an error either).
public struct SystemdNotifyError: Error, Sendable, CustomStringConvertible {
    /// The system call, or `NOTIFY_SOCKET` for an address that cannot be used.
    public let call: String
    /// What went wrong.
    public let detail: String

    init(call: String, detail: String) {
        self.call = call
        self.detail = detail
    }

    init(call: String, errno code: Int32) {
        self.call = call
        detail = String(cString: strerror(code))
    }

    /// `call: detail`.
    public var description: String { "\(call): \(detail)" }
}
