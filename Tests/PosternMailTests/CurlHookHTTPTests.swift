import Foundation
import PosternCore
@testable import PosternMail
import Testing

/// The hooks' libcurl client against loopback servers (https with a CA made for the test, and
/// plain http): the signed headers as sent, certificates checked, the deadline held over a server
/// that never answers, an answer over 16 KiB refused. Needs `python3` and `openssl` on PATH;
/// fails (does not skip) without them.
@Suite("CurlHookHTTP: signed POSTs within the deadline, certificates checked, answers capped", .serialized)
final class CurlHookHTTPTests {
    let directory: URL
    let server: Process
    /// The server's stdin: closed, it ends the server.
    let lifeline = Pipe()
    let httpsOrigin: String
    let httpOrigin: String
    let caFile: String

    /// POST `/allow` echoes the Standard Webhooks headers and the body it got beside its decision;
    /// `/hang` never answers; `/big` answers 17 KiB. The same handler on https and on http.
    static let script = #"""
        import http.server, json, os, ssl, subprocess, sys, threading, time
        d = sys.argv[1]
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        def run(*args): subprocess.run(args, check=True, capture_output=True, cwd=d)
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=Postern hook test CA")
        run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
        with open(os.path.join(d, "ext.cnf"), "w") as f: f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
        run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf")
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if self.path == "/hang":
                    time.sleep(3600)
                    return
                if self.path == "/big": answer = b'{"decision":"allow","pad":"' + b"x" * (17 * 1024) + b'"}'
                else:
                    answer = json.dumps({"decision": "allow", "id": self.headers.get("webhook-id"),
                        "timestamp": self.headers.get("webhook-timestamp"), "signature": self.headers.get("webhook-signature"),
                        "type": self.headers.get("Content-Type"), "body": body}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
        secure = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
        secure.socket = context.wrap_socket(secure.socket, server_side=True)
        plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        for s in (secure, plain): s.daemon_threads = True
        threading.Thread(target=plain.serve_forever, daemon=True).start()
        print(secure.server_address[1], plain.server_address[1], flush=True)
        secure.serve_forever()
        """#

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hook-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [ProcessInfo.processInfo.environment["POSTERN_PYTHON"] ?? "python3", "-c", Self.script, directory.path]
        let output = Pipe()
        server.standardOutput = output
        server.standardInput = lifeline
        try server.run()
        // The first line is the two ports, printed once the certificates exist and the sockets listen.
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
        let ports = String(decoding: line, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        try #require(ports.count == 2, "the test server did not start")
        httpsOrigin = "https://127.0.0.1:\(ports[0])"
        httpOrigin = "http://127.0.0.1:\(ports[1])"
        caFile = directory.appendingPathComponent("ca.pem").path
    }

    deinit {
        // SIGKILL: a child of the test runner may inherit SIGTERM blocked.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    static let secret = "whsec_" + Data(Array(repeating: UInt8(9), count: 32)).base64EncodedString()

    func headers(_ body: String) throws -> WebhookSignedHeaders {
        WebhookSignedHeaders(id: "msg_test", timestamp: 1_800_000_000, body: body, secrets: [try WebhookSecret(Self.secret)])
    }

    @Test("https with the CA file: the body and the three Standard Webhooks headers arrive as signed; http to loopback too")
    func signedPost() throws {
        let body = #"{"data":{"uid":"u1"},"timestamp":"2027-01-15T08:00:00Z","type":"before_sign_in"}"#
        let signed = try headers(body)
        for origin in [httpsOrigin, httpOrigin] {
            let response = try CurlHookHTTP(timeoutMilliseconds: 2000, caFile: caFile).post(origin + "/allow", headers: signed, body: body)
            #expect(response.status == 200)
            let echoed = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect(echoed["id"] as? String == "msg_test")
            #expect(echoed["timestamp"] as? String == "1800000000")
            #expect(echoed["signature"] as? String == signed.signature)
            #expect(echoed["type"] as? String == "application/json")
            #expect(echoed["body"] as? String == body)
        }
    }

    @Test("without the CA file the certificate is refused")
    func certificateChecked() throws {
        let error = #expect(throws: ProviderHTTPError.self) {
            try CurlHookHTTP(timeoutMilliseconds: 2000, caFile: nil).post(httpsOrigin + "/allow", headers: try headers("{}"), body: "{}")
        }
        #expect(error?.description.contains("certificate") == true)
    }

    @Test("a hook that never answers: the call ends at its deadline (300 ms), connecting and waiting included")
    func deadlineHolds() throws {
        let started = ContinuousClock.now
        let error = #expect(throws: ProviderHTTPError.self) {
            try CurlHookHTTP(timeoutMilliseconds: 300, caFile: caFile).post(httpsOrigin + "/hang", headers: try headers("{}"), body: "{}")
        }
        let elapsed = ContinuousClock.now - started
        #expect(error != nil)
        // The bound is the deadline's, with room for a loaded machine; the server would wait an hour.
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(3), "the call took \(elapsed)")
    }

    @Test("an answer over 16 KiB is refused, not cut")
    func longAnswerRefused() throws {
        let error = #expect(throws: ProviderHTTPError.self) {
            try CurlHookHTTP(timeoutMilliseconds: 2000, caFile: caFile).post(httpsOrigin + "/big", headers: try headers("{}"), body: "{}")
        }
        #expect(error?.description.contains("longer than 16 KiB") == true)
    }
}
