import Foundation
import PosternCore
@testable import PosternMail
import Testing

/// The identity providers' libcurl client against a loopback https server whose certificate comes
/// from a CA made by `openssl` for the test: trusted only through the CA file, no redirect
/// followed, `Cache-Control` captured, a body over 256 KiB refused, form POSTs with HTTP Basic.
/// Needs `python3` and `openssl` on PATH; fails (does not skip) without them.
@Suite("CurlProviderHTTP: https to identity providers, certificates checked, the CA file added", .serialized)
final class CurlProviderHTTPTests {
    let server: LoopbackTestServer
    let origin: String
    var caFile: String { server.caFile }

    /// The server: `/jwks` (JSON, `Cache-Control: public, max-age=3600`), `/moved` (302 to
    /// `/jwks`), `/big` (300 KiB), and POST `/token`, which answers the form body and the
    /// `Authorization` header it received as JSON.
    static let script = #"""
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def answer(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers: self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self):
                if self.path == "/jwks": self.answer(200, b'{"keys": []}', [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=3600")])
                elif self.path == "/moved": self.answer(302, b"", [("Location", "/jwks")])
                elif self.path == "/big": self.answer(200, b" " * (300 * 1024))
                else: self.answer(404, b"")
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                self.answer(200, json.dumps({"form": body, "authorization": self.headers.get("Authorization")}).encode())
        server = tls(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    init() throws {
        server = try LoopbackTestServer(name: "provider-http", script: Self.script)
        let port = try #require(Int(server.firstLine), "the test server did not start")
        origin = "https://127.0.0.1:\(port)"
    }

    @Test("a GET with the test CA: the status, the body and the Cache-Control header")
    func getWithCAFile() throws {
        let response = try CurlProviderHTTP(caFile: caFile).get(origin + "/jwks")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"keys": []}"#)
        #expect(response.cacheControl == "public, max-age=3600")
    }

    @Test("without the CA file the certificate is refused: checks are always on")
    func certificateChecked() {
        let error = #expect(throws: ProviderHTTPError.self) { try CurlProviderHTTP(caFile: nil).get(origin + "/jwks") }
        #expect(error?.description.contains("certificate") == true)
        #expect(error?.description.contains("/jwks") == false)
    }

    @Test("a redirect is answered as it is, not followed")
    func redirectNotFollowed() throws {
        let response = try CurlProviderHTTP(caFile: caFile).get(origin + "/moved")
        #expect(response.status == 302 && response.body.isEmpty)
    }

    @Test("a body over 256 KiB is refused")
    func longBodyRefused() {
        let error = #expect(throws: ProviderHTTPError.self) { try CurlProviderHTTP(caFile: caFile).get(origin + "/big") }
        #expect(error?.description.contains("longer than 256 KiB") == true)
    }

    @Test("http is refused before connecting, as is any other scheme")
    func onlyHTTPS() {
        let plain = origin.replacingOccurrences(of: "https://", with: "http://")
        let error = #expect(throws: ProviderHTTPError.self) { try CurlProviderHTTP(caFile: caFile).get(plain + "/jwks") }
        #expect(error?.description.contains("only https") == true)
        #expect(throws: ProviderHTTPError.self) { try CurlProviderHTTP(caFile: caFile).get("file:///etc/passwd") }
        #expect(throws: ProviderHTTPError.self) {
            try CurlProviderHTTP(caFile: caFile).postForm(plain + "/token", fields: [("code", "c")], basic: nil)
        }
    }

    @Test("a form POST is encoded, with HTTP Basic when given")
    func postForm() throws {
        let http = CurlProviderHTTP(caFile: caFile)
        let response = try http.postForm(origin + "/token", fields: [("code", "a b&c"), ("redirect_uri", "https://p/cb")], basic: ("web", "s3cret"))
        let echoed = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(echoed["form"] as? String == "code=a%20b%26c&redirect_uri=https%3A%2F%2Fp%2Fcb")
        #expect(echoed["authorization"] as? String == "Basic " + Data("web:s3cret".utf8).base64EncodedString())
        let publicClient = try http.postForm(origin + "/token", fields: [("client_id", "web")], basic: nil)
        let publicEchoed = try #require(try JSONSerialization.jsonObject(with: Data(publicClient.body)) as? [String: Any])
        #expect(publicEchoed["authorization"] is NSNull)
    }
}
