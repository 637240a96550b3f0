import Foundation
import PosternCrypto
import Testing

/// Independent implementations as oracles: what we mint, another library must accept. These need
/// the Python test tools (`POSTERN_PYTHON`, set by scripts/test) and live in their own target.
@Suite("ES256 and RS256 against PyJWT")
struct JSONWebTokenOracleTests {
    /// An independent implementation (PyJWT with `cryptography`) verifies our token against our JWKS.
    @Test("PyJWT verifies a token minted here against the JWKS")
    func independentVerifier() throws {
        let key = try SigningKey(generatingWithID: "kid-42")
        let claims = Data(#"{"sub":"user-1","iat":1700000000,"exp":4102444800,"email":"a@example.com"}"#.utf8)
        let token = try JSONWebToken.sign(claims: claims, with: key)
        let jwks = try JSONSerialization.data(withJSONObject: ["keys": [key.publicJWK]])
        let script = """
            import json, sys, jwt
            jwks = json.loads(sys.argv[2])
            key = jwt.PyJWKSet.from_dict(jwks)[jwt.get_unverified_header(sys.argv[1])["kid"]]
            claims = jwt.decode(sys.argv[1], key=key.key, algorithms=["ES256"])
            print(claims["sub"])
            """
        let output = try runPython(script, arguments: [token, String(decoding: jwks, as: UTF8.self)])
        #expect(output.status == 0, "PyJWT said: \(output.text)")
        #expect(output.text.trimmingCharacters(in: .whitespacesAndNewlines) == "user-1")

        let forged = try JSONWebToken.sign(claims: claims, with: SigningKey(generatingWithID: "kid-42"))
        let refused = try runPython(script, arguments: [forged, String(decoding: jwks, as: UTF8.self)])
        #expect(refused.status != 0, "a token signed by another key must not verify")
    }

    /// The same with RS256: PyJWT picks the RSA key out of a JWKS that holds both kinds (as ours
    /// does) by `kid`, and checks the RSASSA-PKCS1-v1_5 signature with `cryptography`.
    @Test("PyJWT verifies an RS256 token minted here against a JWKS of both kinds")
    func independentRS256Verifier() throws {
        let rsa = try RSASigningKey(generatingWithID: "kid-rsa")
        let ec = try SigningKey(generatingWithID: "kid-ec")
        let claims = Data(#"{"sub":"user-2","iat":1700000000,"exp":4102444800}"#.utf8)
        let token = try JSONWebToken.sign(claims: claims, with: rsa)
        let jwks = String(decoding: try JSONSerialization.data(withJSONObject: ["keys": [ec.publicJWK, rsa.publicJWK]]), as: UTF8.self)
        let script = """
            import json, sys, jwt
            jwks = json.loads(sys.argv[2])
            header = jwt.get_unverified_header(sys.argv[1])
            assert header["alg"] == "RS256", header
            key = jwt.PyJWKSet.from_dict(jwks)[header["kid"]]
            claims = jwt.decode(sys.argv[1], key=key.key, algorithms=["RS256"])
            print(claims["sub"])
            """
        let output = try runPython(script, arguments: [token, jwks])
        #expect(output.status == 0, "PyJWT said: \(output.text)")
        #expect(output.text.trimmingCharacters(in: .whitespacesAndNewlines) == "user-2")

        let forged = try JSONWebToken.sign(claims: claims, with: RSASigningKey(generatingWithID: "kid-rsa"))
        let refused = try runPython(script, arguments: [forged, jwks])
        #expect(refused.status != 0, "a token signed by another RSA key must not verify")
    }
}

/// Runs Python (`POSTERN_PYTHON`, else `python3` from PATH) with `script`.
func runPython(_ script: String, arguments: [String]) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let python = ProcessInfo.processInfo.environment["POSTERN_PYTHON"] ?? "python3"
    process.arguments = [python, "-c", script] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

