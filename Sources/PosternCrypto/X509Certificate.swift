internal import COpenSSL

/// An X.509 certificate's RSA public key, for checking signatures a service made with its private
/// half (Amazon SNS signs each message it posts with the key of the certificate at its
/// `SigningCertURL`). Only the key is kept: whether the certificate is to be trusted at all is
/// decided by where it came from (an https URL on an allowed host), not here.
public final class X509Certificate: Sendable {
    /// The hash a signature was made over (SNS's `SignatureVersion` 1 and 2).
    public enum Digest: Sendable, Hashable {
        /// SHA-1 (SNS `SignatureVersion` 1).
        case sha1
        /// SHA-256 (SNS `SignatureVersion` 2).
        case sha256
    }

    /// The smallest RSA key whose signatures are believed.
    static let minimumBits: Int32 = 2048

    private let key: PKey

    /// Reads the first certificate of the PEM text `pem` and takes its public key.
    /// - Throws: `CryptoError.malformed` when the text holds no certificate, or its key is not
    ///   RSA of at least 2048 bits.
    public init(pem: [UInt8]) throws(CryptoError) {
        guard !pem.isEmpty, pem.count <= Int(Int32.max) else { throw .malformed("certificate (PEM)") }
        let parsed: OpaquePointer? = pem.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformed("certificate (PEM)")
        }
        defer { X509_free(parsed) }
        guard let publicKey = X509_get_pubkey(parsed) else {
            ERR_clear_error()
            throw .malformed("certificate's public key")
        }
        key = PKey(publicKey)
        guard EVP_PKEY_is_a(publicKey, "RSA") == 1, EVP_PKEY_get_bits(publicKey) >= Self.minimumBits else {
            throw .malformed("certificate's public key (not RSA, or under 2048 bits)")
        }
    }

    /// True when `signature` is the RSASSA-PKCS1-v1_5 signature of `message` hashed with
    /// `digest`, made with this certificate's key. A signature of another length than the modulus
    /// is refused (RFC 8017 §8.2.2 step 1).
    public func verifiesRSA(_ signature: [UInt8], of message: [UInt8], digest: Digest) -> Bool {
        switch digest {
        case .sha1: key.verifiesPKCS1(signature, of: message, digest: EVP_sha1())
        case .sha256: key.verifiesPKCS1(signature, of: message, digest: EVP_sha256())
        }
    }
}
