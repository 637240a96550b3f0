import Foundation
internal import COpenSSL

/// SHA-256 digests (FIPS 180-4) through OpenSSL's EVP interface.
public enum SHA256 {
    /// The 32-byte digest of `data`.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { input in
            out.withUnsafeMutableBufferPointer { digest in
                var length: UInt32 = 0
                // EVP_Digest with a built-in digest cannot fail short of memory exhaustion.
                _ = EVP_Digest(input.baseAddress, input.count, digest.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        return out
    }

    /// The digest of a string's UTF-8 bytes.
    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
}
