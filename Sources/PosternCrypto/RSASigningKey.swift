internal import COpenSSL

/// An RSA key for RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3): the algorithm OpenID
/// Connect makes mandatory (Core §15.1), for relying parties that take nothing else. Its public
/// half is published in the JWKS beside the ES256 keys.
///
/// 2048-bit keys: RFC 7518 §3.3's minimum, and what the JWKS of the large providers publish.
/// Measured here (OpenSSL 3.0, `openssl speed`): a 2048-bit signature takes 0.28 ms, a 3072-bit
/// one 1.8 ms, and the token endpoint signs two tokens per answer.
public final class RSASigningKey: JSONWebSigningKey {
    /// The size of the keys this type generates, in bits.
    public static let generatedBits: Int32 = 2048
    /// The smallest key this type opens (RFC 7518 §3.3).
    static let minimumBits: Int32 = 2048

    /// The `kid` under which the public key is published.
    public let keyID: String
    /// The public key as a JWK: `kty` RSA, the modulus `n` and exponent `e`, `kid`, `alg`, `use`.
    public let publicJWK: [String: String]
    private let key: PKey

    /// RS256.
    public var algorithm: JSONWebToken.Algorithm { .rs256 }

    /// Generates a new 2048-bit key with exponent 65537.
    /// - Throws: `CryptoError` when OpenSSL cannot generate the key.
    public init(generatingWithID keyID: String) throws(CryptoError) {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Self.generatedBits), "EVP_PKEY_CTX_set_rsa_keygen_bits")
        var pkey: OpaquePointer?
        try check(EVP_PKEY_generate(ctx, &pkey), "EVP_PKEY_generate")
        guard let pkey else { throw .openSSL("EVP_PKEY_generate") }
        self.key = PKey(pkey)
        self.keyID = keyID
        self.publicJWK = try Self.jwk(of: key, keyID: keyID)
    }

    /// Restores a key from the PKCS#8 DER bytes `privateKeyDER` returned.
    /// - Throws: `CryptoError.malformed` when the bytes are not an RSA private key of at least 2048 bits.
    public init(privateKeyDER der: [UInt8], keyID: String) throws(CryptoError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformed("RSA signing key")
        }
        self.key = PKey(parsed)
        self.keyID = keyID
        guard EVP_PKEY_is_a(parsed, "RSA") == 1, EVP_PKEY_get_bits(parsed) >= Self.minimumBits else {
            throw .malformed("RSA signing key (not RSA, or under 2048 bits)")
        }
        self.publicJWK = try Self.jwk(of: key, keyID: keyID)
    }

    /// A key that only verifies: the public key of a JWK's modulus `n` and exponent `e` (unsigned
    /// big-endian), such as an identity provider publishes. ``sign(_:)`` and ``privateKeyDER()``
    /// throw for it.
    /// - Throws: `CryptoError.malformed` when the numbers are not an RSA public key of at least 2048 bits.
    public init(publicModulus n: [UInt8], exponent e: [UInt8], keyID: String) throws(CryptoError) {
        let modulus = n.isEmpty ? nil : BN_bin2bn(n, Int32(n.count), nil)
        let exponent = e.isEmpty ? nil : BN_bin2bn(e, Int32(e.count), nil)
        defer {
            BN_free(modulus)
            BN_free(exponent)
        }
        guard let modulus, let exponent else { throw .malformed("RSA public key") }
        self.key = try PKey.publicKey(type: "RSA", what: "RSA public key") { builder in
            OSSL_PARAM_BLD_push_BN(builder, postern_name_rsa_n(), modulus) == 1
                && OSSL_PARAM_BLD_push_BN(builder, postern_name_rsa_e(), exponent) == 1
        }
        guard EVP_PKEY_get_bits(key.pointer) >= Self.minimumBits else { throw .malformed("RSA public key (under 2048 bits)") }
        self.keyID = keyID
        self.publicJWK = try Self.jwk(of: key, keyID: keyID)
    }

    /// The private key as PKCS#8 DER (a PrivateKeyInfo), for storage (sealed) in the key ring.
    /// - Throws: `CryptoError` when OpenSSL cannot encode the key.
    public func privateKeyDER() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(key.pointer) else { throw .openSSL("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw .openSSL("i2d_PKCS8_PRIV_KEY_INFO") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else { throw .openSSL("i2d_PKCS8_PRIV_KEY_INFO") }
        return out
    }

    /// The RSASSA-PKCS1-v1_5 signature of SHA-256(`message`), as long as the modulus.
    /// - Throws: `CryptoError` when signing fails.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        var pctx: OpaquePointer?
        try check(EVP_DigestSignInit(md, &pctx, EVP_sha256(), nil, key.pointer), "EVP_DigestSignInit")
        try check(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING), "EVP_PKEY_CTX_set_rsa_padding")
        var length = 0
        try check(EVP_DigestSign(md, nil, &length, message, message.count), "EVP_DigestSign")
        var signature = [UInt8](repeating: 0, count: length)
        try check(EVP_DigestSign(md, &signature, &length, message, message.count), "EVP_DigestSign")
        return Array(signature.prefix(length))
    }

    /// True when `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message`. A
    /// signature of another length than the modulus is refused (RFC 8017 §8.2.2 step 1).
    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        key.verifiesPKCS1(signature, of: message, digest: EVP_sha256())
    }

    /// The public JWK of `key`: its modulus and public exponent, big-endian, without leading zeros.
    private static func jwk(of key: PKey, keyID: String) throws(CryptoError) -> [String: String] {
        let n = try parameter(OSSL_PKEY_PARAM_RSA_N, of: key)
        let e = try parameter(OSSL_PKEY_PARAM_RSA_E, of: key)
        return ["kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyID, "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
    }

    /// A big-number parameter of `key` (`n`, `e`) as unsigned big-endian bytes.
    private static func parameter(_ name: String, of key: PKey) throws(CryptoError) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key.pointer, name, &number) == 1, let number else { throw .openSSL("EVP_PKEY_get_bn_param") }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        let written = BN_bn2bin(number, &bytes)
        guard written == bytes.count, !bytes.isEmpty else { throw .openSSL("BN_bn2bin") }
        return bytes
    }
}

extension PKey {
    /// True when `signature` is this RSA key's RSASSA-PKCS1-v1_5 signature of `message` hashed
    /// with `digest`. A signature of another length than the modulus is refused (RFC 8017
    /// §8.2.2 step 1).
    func verifiesPKCS1(_ signature: [UInt8], of message: [UInt8], digest: OpaquePointer?) -> Bool {
        guard signature.count == Int(EVP_PKEY_get_size(pointer)), let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit(md, &pctx, digest, nil, pointer) == 1,
            EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1
        else {
            ERR_clear_error()
            return false
        }
        let verified = EVP_DigestVerify(md, signature, signature.count, message, message.count) == 1
        // A refused signature leaves its reason on the thread's error queue: clear it, so that it
        // is not blamed on the next OpenSSL call that fails.
        if !verified { ERR_clear_error() }
        return verified
    }
}
