internal import COpenSSL

/// AES-256-GCM sealing of small secrets (the key ring's keys) under a master key, so that secrets
/// never sit in the database in the clear. Layout: 12-byte nonce ‖ ciphertext ‖ 16-byte tag.
public struct SecretBox: Sendable {
    private let key: [UInt8]

    /// Bytes in a master key.
    public static let keyLength = 32

    /// - Throws: `CryptoError.malformed` unless `key` has 32 bytes.
    public init(key: [UInt8]) throws(CryptoError) {
        guard key.count == Self.keyLength else { throw .malformed("master key (needs 32 bytes)") }
        self.key = key
    }

    /// A key for another use, derived from the master key: HMAC-SHA256 of `label` under it (32
    /// bytes). The same label gives the same key; the master key cannot be had back from it.
    /// - Throws: `CryptoError` when the HMAC cannot be set up.
    public func derivedKey(label: String) throws(CryptoError) -> [UInt8] {
        try HMACKey(key: key).authenticate(Array(label.utf8))
    }

    /// Encrypts and authenticates `plaintext`, binding `context` (for example the key id) as
    /// associated data so a sealed value cannot be moved to another row.
    /// - Throws: `CryptoError` when the DRBG or the cipher fails.
    public func seal(_ plaintext: [UInt8], context: [UInt8]) throws(CryptoError) -> [UInt8] {
        let nonce = try SecureRandom.bytes(12)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        try check(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce), "EVP_EncryptInit_ex")
        var length: Int32 = 0
        if !context.isEmpty {
            try check(EVP_EncryptUpdate(ctx, nil, &length, context, Int32(context.count)), "EVP_EncryptUpdate(aad)")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        try check(EVP_EncryptUpdate(ctx, &ciphertext, &length, plaintext, Int32(plaintext.count)), "EVP_EncryptUpdate")
        var total = Int(length)
        try ciphertext.withUnsafeMutableBufferPointer { (out) throws(CryptoError) in
            try check(EVP_EncryptFinal_ex(ctx, out.baseAddress.map { $0 + total }, &length), "EVP_EncryptFinal_ex")
        }
        total += Int(length)
        var tag = [UInt8](repeating: 0, count: 16)
        try check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, &tag), "EVP_CIPHER_CTX_ctrl(get tag)")
        return nonce + ciphertext.prefix(total) + tag
    }

    /// Decrypts a value `seal` made with the same key and context.
    /// - Throws: `CryptoError.authenticationFailed` when the value was altered, moved to another
    ///   context, or sealed under another key.
    public func open(_ sealed: [UInt8], context: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= 28 else { throw .malformed("sealed secret") }
        let nonce = Array(sealed.prefix(12))
        var tag = Array(sealed.suffix(16))
        let ciphertext = Array(sealed.dropFirst(12).dropLast(16))
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        try check(EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce), "EVP_DecryptInit_ex")
        var length: Int32 = 0
        if !context.isEmpty {
            try check(EVP_DecryptUpdate(ctx, nil, &length, context, Int32(context.count)), "EVP_DecryptUpdate(aad)")
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        try check(EVP_DecryptUpdate(ctx, &plaintext, &length, ciphertext, Int32(ciphertext.count)), "EVP_DecryptUpdate")
        let total = Int(length)
        try check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, &tag), "EVP_CIPHER_CTX_ctrl(set tag)")
        let finalOK = plaintext.withUnsafeMutableBufferPointer { out in
            EVP_DecryptFinal_ex(ctx, out.baseAddress.map { $0 + total }, &length)
        }
        guard finalOK == 1 else {
            ERR_clear_error()
            throw .authenticationFailed
        }
        return Array(plaintext.prefix(total + Int(length)))
    }
}
