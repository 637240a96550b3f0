import Foundation
import Testing

/// A Python HTTP server on loopback for the libcurl clients' tests, with a CA made by `openssl`
/// for the test and a certificate for 127.0.0.1 and localhost under it (`server.pem`,
/// `server.key`, `ca.pem` in ``directory``). `script` runs after that prelude, with `d` the
/// directory, and prints its first line (the ports) once it listens. Needs `python3` and
/// `openssl` on PATH; fails (does not skip) without them. Ends with the test (its stdin closes).
final class LoopbackTestServer {
    let directory: URL
    let process: Process
    /// The server's stdin: closed, it ends the server.
    let lifeline = Pipe()
    /// What the script printed first.
    let firstLine: String
    /// The test CA, to trust.
    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    static let prelude = #"""
        import http.server, json, os, ssl, subprocess, sys, threading, time
        d = sys.argv[1]
        # Ends with the test: its stdin closes when the test is done or dies.
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        def run(*args): subprocess.run(args, check=True, capture_output=True, cwd=d)
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=Postern loopback test CA")
        run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
        with open(os.path.join(d, "ext.cnf"), "w") as f: f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
        run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf")
        def tls(server):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
            server.socket = context.wrap_socket(server.socket, server_side=True)
            return server

        """#

    init(name: String, script: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [ProcessInfo.processInfo.environment["POSTERN_PYTHON"] ?? "python3", "-c", Self.prelude + script, directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = lifeline
        try process.run()
        // The first line, printed once the certificates exist and the sockets listen.
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
        firstLine = String(decoding: line, as: UTF8.self)
    }

    deinit {
        // SIGKILL: a child of the test runner may inherit SIGTERM blocked.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
