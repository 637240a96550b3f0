import Foundation
import PosternCore
@testable import PosternMail
import Testing

@Suite("Transports")
struct TransportTests {
    func mail(to recipient: String = "jane@example.com", sender: String = "no-reply@example.com") -> OutgoingMail {
        OutgoingMail(
            storedMessageID: "<AbC_12-x@example.com>", envelope: MailEnvelope(sender: sender, recipients: [recipient]),
            bytes: Array("Subject: hi\r\n\r\n.dot line\r\n".utf8))
    }

    @Test("file: writes one whole .eml per message, private, with no temporary file left")
    func directory() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("postern-eml-\(UUID().uuidString)/nested")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let transport = try DirectoryTransport(directory: folder.path)
        guard case .sent(let reply) = transport.deliver(mail()) else {
            Issue.record("not written")
            return
        }
        _ = transport.deliver(mail())
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count == 2)
        #expect(files.allSatisfy { $0.hasSuffix("-AbC_12-x.eml") && !$0.hasPrefix(".") })
        #expect(reply.hasPrefix("250 written to "))
        let path = folder.appendingPathComponent(files[0]).path
        #expect(FileManager.default.contents(atPath: path) == Data(mail().bytes))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    @Test("file: a closed gate leaves no file; a directory gone away is a transient failure, with nothing left behind")
    func directoryGateAndFailure() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("postern-eml-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = try DirectoryTransport(directory: folder.path)
        guard case .transient = transport.deliver(mail(), completingAfter: { false }) else {
            Issue.record("written although the gate was closed")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
        guard case .sent = transport.deliver(mail(), completingAfter: { true }) else {
            Issue.record("not written")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)
        try FileManager.default.removeItem(at: folder)
        guard case .transient(let reply, _) = transport.deliver(mail()) else {
            Issue.record("a removed directory was not a transient failure")
            return
        }
        #expect(reply.hasPrefix("cannot write to \(folder.path)"))
    }

    @Test("file: a directory that cannot be written is a transient failure")
    func unwritableDirectory() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("postern-notdir-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: (any Error).self) { try DirectoryTransport(directory: file.path) }
    }

    @Test("envelope addresses with CR, LF, other controls or angle brackets never reach curl")
    func envelopeValidation() {
        #expect(SMTPTransport.isSafeEnvelopeAddress("jane@example.com"))
        #expect(SMTPTransport.isSafeEnvelopeAddress("\"jane doe\"@example.com"))
        for bad in ["jane@example.com\r\nRCPT TO:<x@evil.example>", "jane@exa\nmple.com", "a\u{0}@b.c", "<a@b.c>", "no-at-sign", ""] {
            #expect(!SMTPTransport.isSafeEnvelopeAddress(bad), "\(bad.debugDescription)")
        }
        // Checked before any connection: the port below is never contacted.
        let transport = SMTPTransport(endpoint: SMTPEndpoint(security: .none, host: "127.0.0.1", port: 9), password: nil)
        #expect(transport.deliver(mail(to: "x@example.com\r\nDATA")) == .permanent(reply: "not sent: a recipient address has characters SMTP cannot carry"))
        guard case .transient(_, true) = transport.deliver(mail(sender: "a@b.c\rQUIT")) else {
            Issue.record("a bad sender is a setup problem, not the recipient's")
            return
        }
    }

    @Test("the end of data waits for the gate: asked once, before the last part is handed to curl")
    func endOfDataGate() {
        let exchange = SMTPExchange(secret: nil)
        let body = Array("0123456789".utf8)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: 64)
        defer { buffer.deallocate() }
        var asked = 0
        exchange.begin(body) {
            asked += 1
            return true
        }
        #expect(exchange.read(into: buffer, capacity: 4) == 4)
        #expect(exchange.read(into: buffer, capacity: 4) == 4)
        #expect(asked == 0, "not before the last part")
        #expect(exchange.read(into: buffer, capacity: 4) == 2)
        #expect(asked == 1)
        #expect(exchange.read(into: buffer, capacity: 4) == 0)
        #expect(asked == 1)
        exchange.end()

        exchange.begin(body) { false }
        let abort = 0x1000_0000  // CURL_READFUNC_ABORT
        #expect(exchange.read(into: buffer, capacity: 64) == abort)
        #expect(exchange.gateRefused)
        exchange.end()
    }

    @Test("reply lines are kept without control characters, AUTH challenges and the password")
    func replyCleaning() {
        let exchange = SMTPExchange(secret: "hunter2")
        exchange.begin([]) { true }
        Array("AUTH PLAIN AGh1bnRlcjI=\r\n".utf8).withUnsafeBytes { exchange.sawCommand($0) }
        Array("334 aHVudGVyMg==\r\n".utf8).withUnsafeBytes { exchange.sawReply($0) }
        #expect(exchange.reply == "334")
        Array("535 5.7.8 bad password hunter2\r\n".utf8).withUnsafeBytes { exchange.sawReply($0) }
        #expect(exchange.reply == "535 5.7.8 bad password ***" && exchange.replyCode == 535 && exchange.stage == .authentication)
        Array("QUIT\r\n".utf8).withUnsafeBytes { exchange.sawCommand($0) }
        Array("221 bye\r\n".utf8).withUnsafeBytes { exchange.sawReply($0) }
        #expect(exchange.replyCode == 535, "curl's QUIT after a failure does not hide the failing reply")
        Array("MAIL FROM:<a@example.com>\r\n".utf8).withUnsafeBytes { exchange.sawCommand($0) }
        Array("2x0 not a reply\r\n".utf8).withUnsafeBytes { exchange.sawReply($0) }
        #expect(exchange.replyCode == 535, "a line without a 3-digit code is not a reply")
        Array(("452 4.3.1 \u{01}é" + String(repeating: "x", count: 400) + "\r\n").utf8).withUnsafeBytes { exchange.sawReply($0) }
        #expect(exchange.replyCode == 452 && exchange.stage == .sender)
        #expect(exchange.reply?.count == 300 && exchange.reply?.hasPrefix("452 4.3.1 é") == true, "\(exchange.reply ?? "")")
        exchange.end()
    }

    @Test("a refused connection is transient and names the failure, with no password in it")
    func refusedConnection() throws {
        let endpoint = SMTPEndpoint(security: .startTLS, host: "127.0.0.1", port: 9, username: "u", password: .inline("hunter2"))
        let transport = SMTPTransport(endpoint: endpoint, password: "hunter2")
        guard case .transient(let reply, true) = transport.deliver(mail()) else {
            Issue.record("expected a transient connection failure")
            return
        }
        #expect(reply.contains("curl"))
        #expect(!reply.contains("hunter2"))
    }

    @Test("the transport factory reads the password file once and refuses an unreadable one")
    func factory() throws {
        let missing = MailTransportConfig.smtp(
            SMTPEndpoint(security: .startTLS, host: "h", port: 587, username: "u", password: .file("/nonexistent/pw")))
        #expect(throws: MailTransportConfig.SetupError.self) { try missing.transportFactory() }
        let ca = MailTransportConfig.smtp(SMTPEndpoint(security: .startTLS, host: "h", port: 587, caFile: "/nonexistent/ca.pem"))
        #expect(throws: MailTransportConfig.SetupError.self) { try ca.transportFactory() }
    }
}
