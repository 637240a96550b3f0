internal import COpenSSL

/// An ECDSA P-256 key for ES256 (RFC 7518 §3.4): signs ID tokens; its public half is published in
/// the JWKS.
public final class SigningKey: Sendable {
    /// The `kid` under which the public key is published.
    public let keyID: String
    private let key: PKey

    /// Generates a new P-256 key.
    /// - Throws: `CryptoError` when OpenSSL cannot generate the key.
    public init(generatingWithID keyID: String) throws(CryptoError) {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_group_name(ctx, "P-256"), "EVP_PKEY_CTX_set_group_name")
        var pkey: OpaquePointer?
        try check(EVP_PKEY_generate(ctx, &pkey), "EVP_PKEY_generate")
        guard let pkey else { throw .openSSL("EVP_PKEY_generate") }
        self.key = PKey(pkey)
        self.keyID = keyID
    }

    /// Restores a key from the DER bytes `privateKeyDER` returned.
    /// - Throws: `CryptoError.malformed` when the bytes are not a P-256 private key.
    public init(privateKeyDER der: [UInt8], keyID: String) throws(CryptoError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .malformed("signing key") }
        self.key = PKey(parsed)
        self.keyID = keyID
        guard publicPoint().count == 65 else { throw .malformed("signing key (not P-256)") }
    }

    /// A key that only verifies: the P-256 public point of a JWK's `x` and `y` (32 bytes each),
    /// such as an identity provider publishes. ``sign(_:)`` and ``privateKeyDER()`` throw for it.
    /// - Throws: `CryptoError.malformed` when the coordinates are not a point of P-256.
    public init(publicX x: [UInt8], y: [UInt8], keyID: String) throws(CryptoError) {
        guard x.count == 32, y.count == 32 else { throw .malformed("P-256 public key") }
        let point: [UInt8] = [4] + x + y
        let made: Result<PKey, CryptoError> = point.withUnsafeBufferPointer { bytes in
            "prime256v1".withCString { group in
                Result { () throws(CryptoError) -> PKey in
                    try PKey.publicKey(type: "EC", what: "P-256 public key") { builder in
                        OSSL_PARAM_BLD_push_utf8_string(builder, postern_name_group(), group, 0) == 1
                            && OSSL_PARAM_BLD_push_octet_string(builder, postern_name_public_key(), bytes.baseAddress, bytes.count) == 1
                    }
                }
            }
        }
        self.key = try made.get()
        self.keyID = keyID
    }

    /// The private key as DER, for storage (wrapped) in the key ring.
    /// - Throws: `CryptoError` when OpenSSL cannot encode the key.
    public func privateKeyDER() throws(CryptoError) -> [UInt8] {
        let length = i2d_PrivateKey(key.pointer, nil)
        guard length > 0 else { throw .openSSL("i2d_PrivateKey") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PrivateKey(key.pointer, &cursor)
        }
        guard written == length else { throw .openSSL("i2d_PrivateKey") }
        return out
    }

    /// The uncompressed public point 0x04 ‖ x ‖ y (65 bytes), or empty when unavailable.
    func publicPoint() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = EVP_PKEY_get_octet_string_param(key.pointer, OSSL_PKEY_PARAM_PUB_KEY, &out, out.count, &length)
        guard ok == 1, length == 65, out[0] == 4 else { return [] }
        return out
    }

    /// The public key as a JWK (RFC 7517) object with `kty`, `crv`, `x`, `y`, `kid`, `alg`, `use`.
    public var publicJWK: [String: String] {
        let point = publicPoint()
        return [
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": keyID,
            "x": Base64URL.encode(Array(point.dropFirst().prefix(32))),
            "y": Base64URL.encode(Array(point.suffix(32))),
        ]
    }

    /// The raw 64-byte r ‖ s signature of SHA-256(`message`), as JWS wants it.
    /// - Throws: `CryptoError` when signing fails.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        try check(EVP_DigestSignInit(md, nil, EVP_sha256(), nil, key.pointer), "EVP_DigestSignInit")
        var length = 0
        try check(EVP_DigestSign(md, nil, &length, message, message.count), "EVP_DigestSign")
        var der = [UInt8](repeating: 0, count: length)
        try check(EVP_DigestSign(md, &der, &length, message, message.count), "EVP_DigestSign")
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)
        }
        guard let signature = parsed else { throw .openSSL("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { out in
            BN_bn2binpad(ECDSA_SIG_get0_r(signature), out.baseAddress, 32)
            BN_bn2binpad(ECDSA_SIG_get0_s(signature), out.baseAddress.map { $0 + 32 }, 32)
        }
        // Low S: (r, s) and (r, n − s) both verify; only the lower one is ever issued or accepted,
        // so a token has exactly one valid text.
        if !Self.isLowS(raw) {
            guard let order = BN_bin2bn(Self.groupOrder, 32, nil), let high = BN_bin2bn(Array(raw[32...]), 32, nil) else {
                throw .openSSL("BN_bin2bn")
            }
            defer {
                BN_free(order)
                BN_free(high)
            }
            try check(BN_sub(order, order, high), "BN_sub")
            raw.withUnsafeMutableBufferPointer { out in _ = BN_bn2binpad(order, out.baseAddress.map { $0 + 32 }, 32) }
        }
        return raw
    }

    /// The order n of P-256, big-endian.
    static let groupOrder: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// ⌊n / 2⌋, big-endian: the largest s a signature may have.
    static let halfOrder: [UInt8] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31, 0x92, 0xA8,
    ]

    /// Whether the s half of a raw r ‖ s signature is at most n / 2 (big-endian comparison).
    static func isLowS(_ signature: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        let s = signature[32...]
        return s.lexicographicallyPrecedes(halfOrder) || s.elementsEqual(halfOrder)
    }

    /// True when `signature` (raw r ‖ s) is this key's signature of `message`.
    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64, Self.isLowS(signature), let ecdsa = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(ecdsa) }
        let r = BN_bin2bn(signature, 32, nil)
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + 32 }, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(ecdsa, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return false
        }
        let length = i2d_ECDSA_SIG(ecdsa, nil)
        guard length > 0 else { return false }
        var der = [UInt8](repeating: 0, count: Int(length))
        _ = der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(ecdsa, &cursor)
        }
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
        return EVP_DigestVerify(md, der, der.count, message, message.count) == 1
    }
}

/// Owns an `EVP_PKEY` (of ``SigningKey`` and ``RSASigningKey``). `@unchecked Sendable`: OpenSSL 3
/// allows concurrent signing and verifying with one key object as long as it is not modified, and
/// nothing modifies it after creation.
final class PKey: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}
