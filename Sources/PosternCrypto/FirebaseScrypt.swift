internal import COpenSSL

/// A Firebase project's password-hash parameters (Console → Authentication → Users → ⋮ →
/// Password hash parameters). The signer key is a secret: whoever holds it and an export can test
/// guesses offline, so it is kept only sealed under the master key and never printed.
public struct FirebaseHashParameters: Sendable, Hashable {
    /// `base64_signer_key`, decoded (secret).
    public let signerKey: [UInt8]
    /// `base64_salt_separator`, decoded.
    public let saltSeparator: [UInt8]
    /// scrypt's block size r (Firebase's "rounds", 1–8).
    public let rounds: Int
    /// log2 of scrypt's N (Firebase's "mem_cost", 1–14).
    public let memCost: Int

    /// - Throws: `CryptoError.malformed` when a parameter is outside what Firebase issues.
    public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memCost: Int) throws(CryptoError) {
        guard !signerKey.isEmpty, signerKey.count <= 1024 else { throw .malformed("Firebase hash key") }
        guard saltSeparator.count <= 64 else { throw .malformed("Firebase salt separator") }
        guard (1...8).contains(rounds) else { throw .malformed("Firebase rounds (1 to 8)") }
        guard (1...14).contains(memCost) else { throw .malformed("Firebase mem cost (1 to 14)") }
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memCost = memCost
    }
}

/// Firebase Auth's modified scrypt, as Firebase publishes it (github.com/firebase/scrypt): the
/// key derived by scrypt(password, salt ‖ separator, N = 2^memCost, r = rounds, p = 1, 32 bytes)
/// encrypts the project's signer key with AES-256-CTR under a zero IV; the ciphertext is the
/// stored hash. Both primitives are OpenSSL's.
public enum FirebaseScrypt {
    /// The hash Firebase stores for `password` with this account's `salt`.
    /// - Throws: `CryptoError` when OpenSSL refuses the parameters.
    public static func hash(password: String, salt: [UInt8], parameters: FirebaseHashParameters) throws(CryptoError) -> [UInt8] {
        let derived = try PasswordHasher.derive(
            password: Array(password.utf8), salt: salt + parameters.saltSeparator, n: UInt64(1) << UInt64(parameters.memCost),
            r: UInt64(parameters.rounds), p: 1, length: 32)
        return try aes256CTR(key: derived, plaintext: parameters.signerKey)
    }

    /// True when `password` gives `expected`, compared in constant time.
    /// - Throws: `CryptoError` when OpenSSL refuses the parameters.
    public static func verify(
        _ password: String, salt: [UInt8], expected: [UInt8], parameters: FirebaseHashParameters
    ) throws(CryptoError) -> Bool {
        ConstantTime.equals(try hash(password: password, salt: salt, parameters: parameters), expected)
    }

    /// AES-256-CTR with a zero initial counter block, through EVP.
    private static func aes256CTR(key: [UInt8], plaintext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let iv = [UInt8](repeating: 0, count: 16)
        try check(EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv), "EVP_EncryptInit_ex(aes-256-ctr)")
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        try check(EVP_EncryptUpdate(ctx, &out, &length, plaintext, Int32(plaintext.count)), "EVP_EncryptUpdate")
        var total = Int(length)
        try out.withUnsafeMutableBufferPointer { (buffer) throws(CryptoError) in
            try check(EVP_EncryptFinal_ex(ctx, buffer.baseAddress.map { $0 + total }, &length), "EVP_EncryptFinal_ex")
        }
        total += Int(length)
        return Array(out.prefix(total))
    }
}
