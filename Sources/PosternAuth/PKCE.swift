import Foundation
#if canImport(CryptoKit)
import CryptoKit
#endif

/// A PKCE pair (RFC 7636, S256): the verifier stays on this device, the challenge goes with the
/// request for a link. The link then completes only with the verifier, or, on another device,
/// with the address it was sent to.
struct PKCE: Sendable, Hashable, Codable {
    /// 32 random bytes, base64url: 43 characters.
    let verifier: String
    /// base64url(SHA-256(verifier)).
    let challenge: String

    /// A new pair; nil where this platform offers no SHA-256 (then the request goes without PKCE).
    static func make() -> PKCE? {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let verifier = base64URL(bytes)
        guard let digest = SHA256Digest.of(Array(verifier.utf8)) else { return nil }
        return PKCE(verifier: verifier, challenge: base64URL(digest))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// SHA-256 from the platform: CryptoKit on Apple platforms; on Linux, OpenSSL's `SHA256`, which
/// FoundationNetworking's libcurl has already loaded into the process — found at run time, so the
/// client has no C module in its build.
enum SHA256Digest {
    static func of(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { hash(input, into: $0) }
        }
        return hashed ? digest : nil
    }

    /// Writes the SHA-256 of `input` into `output` (32 bytes) without allocating: the proof of
    /// work's solver calls it up to `maxnumber` times. False where this platform offers no SHA-256.
    static func hash(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard output.count >= 32 else { return false }
        #if canImport(CryptoKit)
        let digest = CryptoKit.SHA256.hash(data: UnsafeRawBufferPointer(input))
        digest.withUnsafeBytes { bytes in
            for index in 0..<32 { output[index] = bytes[index] }
        }
        return true
        #elseif os(Linux)
        guard let function = openSSLSHA256 else { return false }
        _ = function(input.baseAddress, input.count, output.baseAddress)
        return true
        #else
        return false
        #endif
    }

    #if os(Linux) && !canImport(CryptoKit)
    private typealias Function = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?

    private static let openSSLSHA256: Function? = {
        for name in ["libcrypto.so.3", "libcrypto.so"] {
            guard let library = dlopen(name, RTLD_NOW | RTLD_NOLOAD) ?? dlopen(name, RTLD_NOW),
                  let symbol = dlsym(library, "SHA256") else { continue }
            return unsafeBitCast(symbol, to: Function.self)
        }
        return nil
    }()
    #endif
}
