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
    let directory: URL
    let server: Process
    /// The server's stdin: closed, it ends the server.
    let lifeline = Pipe()
    let origin: String
    let caFile: String

    /// The server: `/jwks` (JSON, `Cache-Control: public, max-age=3600`), `/moved` (302 to
    /// `/jwks`), `/big` (300 KiB), and POST `/token`, which answers the form body and the
    /// `Authorization` header it received as JSON.
    static let script = #"""
        import http.server, json, os, ssl, subprocess, sys, threading
        d = sys.argv[1]
        # Ends with the test: its stdin closes when the test is done or dies.
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        def run(*args): subprocess.run(args, check=True, capture_output=True, cwd=d)
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=Postern provider test CA")
        run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
        with open(os.path.join(d, "ext.cnf"), "w") as f: f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
        run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf")
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
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("provider-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [ProcessInfo.processInfo.environment["POSTERN_PYTHON"] ?? "python3", "-c", Self.script, directory.path]
        let output = Pipe()
        server.standardOutput = output
        server.standardInput = lifeline
        try server.run()
        // The first line is the port, printed once the certificates exist and the socket listens.
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
        let port = try #require(Int(String(decoding: line, as: UTF8.self)), "the test server did not start")
        origin = "https://127.0.0.1:\(port)"
        caFile = directory.appendingPathComponent("ca.pem").path
    }

    deinit {
        // SIGKILL: a child of the test runner may inherit SIGTERM blocked.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
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
