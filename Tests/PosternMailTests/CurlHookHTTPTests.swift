import Foundation
import PosternCore
@testable import PosternMail
import Testing

/// The hooks' libcurl client against loopback servers (https with a CA made for the test, and
/// plain http, ``LoopbackTestServer``): the signed headers as sent, certificates checked, the
/// deadline held over a server that never answers, an answer over 16 KiB refused.
@Suite("CurlHookHTTP: signed POSTs within the deadline, certificates checked, answers capped", .serialized)
final class CurlHookHTTPTests {
    let server: LoopbackTestServer
    let httpsOrigin: String
    let httpOrigin: String
    var caFile: String { server.caFile }

    /// POST `/allow` echoes the Standard Webhooks headers and the body it got beside its decision;
    /// `/hang` never answers; `/big` answers 17 KiB. The same handler on https and on http.
    static let script = #"""
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
        secure = tls(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        for s in (secure, plain): s.daemon_threads = True
        threading.Thread(target=plain.serve_forever, daemon=True).start()
        print(secure.server_address[1], plain.server_address[1], flush=True)
        secure.serve_forever()
        """#

    init() throws {
        server = try LoopbackTestServer(name: "hook-http", script: Self.script)
        let ports = server.firstLine.split(separator: " ").compactMap { Int($0) }
        try #require(ports.count == 2, "the test server did not start")
        httpsOrigin = "https://127.0.0.1:\(ports[0])"
        httpOrigin = "http://127.0.0.1:\(ports[1])"
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
