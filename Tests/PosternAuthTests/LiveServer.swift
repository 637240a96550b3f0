import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
@testable import PosternAuth

/// A real `postern serve` (the debug build next to this test bundle) on a free port, with its
/// own SQLite file and mail directory: the embedded defaults, mail written as `.eml` files.
final class LiveServer: @unchecked Sendable {
    let directory: URL
    let port: Int
    let url: URL
    let adminToken = "auth-tests-admin-token"
    private let process: Process

    /// Starts the daemon and waits until `/healthz` answers. A free port can be taken by another
    /// test between the probe and the daemon's bind: that start is retried on a new port.
    init(_ extra: [String] = []) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var attempt = 0
        while true {
            attempt += 1
            do {
                (port, process) = try await Self.launch(in: directory, adminToken: adminToken, extra: extra)
                break
            } catch ServerError.didNotStart(let log) where log.contains("Address already in use") && attempt < 5 {
                continue
            }
        }
        url = URL(string: "http://127.0.0.1:\(port)")!
    }

    private static func launch(in directory: URL, adminToken: String, extra: [String]) async throws -> (Int, Process) {
        let port = try freePort()
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let process = Process()
        process.executableURL = binary
        process.currentDirectoryURL = directory
        process.arguments = [
            "serve", "--listen", "127.0.0.1:\(port)", "--public-url", url.absoluteString,
            "--database", directory.appendingPathComponent("postern.db").path,
            "--smtp-url", "file:\(directory.appendingPathComponent("mail").path)",
            "--admin-token", adminToken, "--metrics-listen", "off", "--scrypt-log-n", "12",
            "--allowed-continue-hosts", "app.example.com",
            "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0",
        ] + extra
        let logPath = directory.appendingPathComponent("serve.log").path
        precondition(FileManager.default.createFile(atPath: logPath, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        // Our own daemon's answer: it logs "listening" once bound, and another daemon on the port
        // would answer /healthz too.
        func bound() -> Bool { ((try? String(contentsOf: URL(fileURLWithPath: logPath), encoding: .utf8)) ?? "").contains(#""msg":"listening""#) }
        let started = try await poll { () async -> Bool? in
            if bound(), let (_, response) = try? await URLSession.shared.data(from: url.appendingPathComponent("healthz")),
               (response as? HTTPURLResponse)?.statusCode == 200 { return true }
            return process.isRunning ? nil : false
        }
        if started == true { return (port, process) }
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        throw ServerError.didNotStart(log: (try? String(contentsOf: URL(fileURLWithPath: logPath), encoding: .utf8)) ?? "")
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    enum ServerError: Error { case didNotStart(log: String), noMail(String), noCode }

    /// Asks `look` every 50 ms until it answers, for at most 30 s; nil if it never did. The one
    /// wait of these tests for what the server does in the background (bound, a mail written):
    /// PosternTestSupport's `eventually`, which this target cannot import (it depends on the
    /// client alone).
    static func poll<T>(_ look: () async throws -> T?) async throws -> T? {
        for _ in 0..<600 {
            if let found = try await look() { return found }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        return nil
    }

    /// The postern binary built with the tests.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["POSTERN_BINARY"] { return URL(fileURLWithPath: path) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/postern")
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ServerError.didNotStart(log: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Mail

    /// Every mail written so far to `recipient`, oldest first, as raw text.
    func mails(to recipient: String) -> [String] {
        let folder = directory.appendingPathComponent("mail")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
        return names.compactMap { name in
            guard let text = try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) else { return nil }
            let header = text.components(separatedBy: "\r\n\r\n").first ?? text
            return header.lowercased().contains("\nto: \(recipient.lowercased())") || header.lowercased().contains("<\(recipient.lowercased())>") ? text : nil
        }
    }

    /// Waits for the `count`-th mail to `recipient` (1-based) and returns it.
    func mail(to recipient: String, number count: Int = 1) async throws -> String {
        let mail = try await Self.poll { () -> String? in
            let found = mails(to: recipient)
            return found.count >= count ? found[count - 1] : nil
        }
        guard let mail else { throw ServerError.noMail(recipient) }
        return mail
    }

    /// The newest mail to `recipient` after `before` mails were there.
    func newMail(to recipient: String, after before: Int) async throws -> String {
        try await mail(to: recipient, number: before + 1)
    }

    /// The 6-digit code in a sign-in mail's body.
    static func sixDigits(_ mail: String) throws -> String {
        let body = mail.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\n")
        // On a line of its own, as the template sets it: an address may hold six digits in a row.
        let pattern = try NSRegularExpression(pattern: #"^[ \t]*(\d{6})[ \t]*\r?$"#, options: .anchorsMatchLines)
        guard let match = pattern.firstMatch(in: body, range: NSRange(body.startIndex..., in: body)),
              let range = Range(match.range(at: 1), in: body) else { throw ServerError.noCode }
        return String(body[range])
    }

    // MARK: SMS (a server started with `phoneSignInFlags`)

    /// The flags of a server that signs in by phone, SMS written as JSON files to `sms-out`, the
    /// caps lifted (they have their own tests).
    static let phoneSignInFlags = [
        "--phone-sign-in", "--sms-transport", "file:sms-out", "--sms-countries", "DE",
        "--sms-number-interval", "0", "--sms-number-per-hour", "0", "--sms-ip-per-hour", "0",
    ]

    /// Every SMS body written so far to `number` (E.164), oldest first.
    func smsBodies(to number: String) -> [String] {
        let folder = directory.appendingPathComponent("sms-out")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                  let record = try? JSONDecoder().decode([String: String].self, from: data), record["to"] == number else { return nil }
            return record["body"]
        }
    }

    /// Waits for the `count`-th SMS to `number` (1-based) and returns its code (the `#123456` of
    /// the origin-bound last line).
    func smsCode(to number: String, number count: Int = 1) async throws -> String {
        let code = try await Self.poll { () -> String? in
            let found = smsBodies(to: number)
            guard found.count >= count, let code = found[count - 1].split(separator: "#").last.map(String.init),
                  code.count == 6, code.allSatisfy(\.isNumber) else { return nil }
            return code
        }
        guard let code else { throw ServerError.noCode }
        return code
    }

    // MARK: Admin

    /// An admin call, for setting up what a test needs (a disabled user, a link).
    func admin(_ method: String, _ path: String, json: String? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: url.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = method
        request.setValue("Bearer \(adminToken)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// A client of this server with its own memory storage (a "device").
    func device(now: @escaping @Sendable () -> Date = { Date() }, refreshMargin: TimeInterval = 60) -> PosternAuth {
        PosternAuth(configuration: .init(serverURL: url, storage: MemorySessionStorage(), refreshMargin: refreshMargin, now: now))
    }
}
