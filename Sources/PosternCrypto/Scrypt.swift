internal import COpenSSL
import Foundation

/// Password hashing with scrypt (RFC 7914) through `EVP_PBE_scrypt`, stored as a self-describing
/// PHC-style string: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (standard base64, no padding).
///
/// The parameters live in the string, so they can be raised later while old hashes still verify.
public struct PasswordHasher: Sendable {
    /// log2 of the CPU/memory cost N.
    public let logN: Int
    /// Block size r.
    public let blockSize: Int
    /// Parallelism p.
    public let parallelism: Int

    /// Bytes of salt and of derived hash.
    static let saltLength = 16
    static let hashLength = 32

    /// The default: N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds).
    public static let standard = PasswordHasher(logN: 15, blockSize: 8, parallelism: 1)

    /// Creates a hasher with explicit parameters.
    public init(logN: Int, blockSize: Int, parallelism: Int) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// Hashes `password` with a fresh random salt.
    /// - Throws: `CryptoError` when OpenSSL refuses the parameters or the DRBG fails.
    public func hash(_ password: String) throws(CryptoError) -> String {
        let salt = try SecureRandom.bytes(Self.saltLength)
        let derived = try Self.derive(
            password: Array(password.utf8), salt: salt, n: UInt64(1) << UInt64(logN), r: UInt64(blockSize),
            p: UInt64(parallelism), length: Self.hashLength)
        return "$scrypt$ln=\(logN),r=\(blockSize),p=\(parallelism)$\(Self.phcBase64(salt))$\(Self.phcBase64(derived))"
    }

    /// True when `password` matches `encoded`, in time independent of where they differ.
    /// - Throws: `CryptoError.malformed` when `encoded` is not a hash this type wrote.
    public static func verify(_ password: String, against encoded: String) throws(CryptoError) -> Bool {
        let stored = try StoredHash(encoded)
        let derived = try derive(
            password: Array(password.utf8), salt: stored.salt, n: UInt64(1) << UInt64(stored.logN),
            r: UInt64(stored.blockSize), p: UInt64(stored.parallelism), length: stored.hash.count)
        return ConstantTime.equals(derived, stored.hash)
    }

    /// True when `encoded` was made with weaker parameters than these and should be re-hashed.
    /// True when `encoded` is a `$scrypt$` string this type would verify: its parameters within
    /// ``StoredHash``'s bounds. What an import checks before it stores a hash.
    public static func isHash(_ encoded: String) -> Bool { (try? StoredHash(encoded)) != nil }

    public func needsRehash(_ encoded: String) -> Bool {
        guard let stored = try? StoredHash(encoded) else { return true }
        return stored.logN < logN || stored.blockSize < blockSize || stored.parallelism < parallelism
    }

    /// Raw scrypt, as in RFC 7914 §12's test vectors.
    /// - Throws: `CryptoError` when OpenSSL refuses the parameters (for example N not a power of two).
    public static func derive(
        password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int
    ) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        // Memory: 128·r·N bytes for V plus 128·r·p for B, with headroom.
        let maxMemory = 128 * r * (n + p + 2) + 1 << 20
        // A trailing zero keeps the pointers valid for empty inputs; the counts exclude it.
        let passwordBytes = password + [0]
        let saltBytes = salt + [0]
        let ok = passwordBytes.withUnsafeBufferPointer { pw in
            saltBytes.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    UnsafeRawPointer(pw.baseAddress!).withMemoryRebound(to: CChar.self, capacity: pw.count) { chars in
                        EVP_PBE_scrypt(chars, password.count, s.baseAddress, salt.count, n, r, p, maxMemory, o.baseAddress, o.count)
                    }
                }
            }
        }
        try check(ok, "EVP_PBE_scrypt")
        return out
    }

    static func phcBase64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func phcDecode(_ text: Substring) -> [UInt8]? {
        var padded = String(text)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map { Array($0) }
    }
}

/// The parsed form of a PHC scrypt string.
struct StoredHash {
    let logN: Int
    let blockSize: Int
    let parallelism: Int
    let salt: [UInt8]
    let hash: [UInt8]

    init(_ encoded: String) throws(CryptoError) {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else { throw .malformed("password hash") }
        var values: [Substring: Int] = [:]
        for pair in fields[2].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Int(kv[1]) else { throw .malformed("password hash parameters") }
            values[kv[0]] = value
        }
        // At most what `--scrypt-log-n` can make (ln 20 with r 8: 1 GiB) in memory, and p ≤ 4. An
        // imported string asking for more (ln 24 with r 64 was 128 GiB a check) must not stall or
        // kill the daemon at every sign-in to its address.
        guard let ln = values["ln"], let r = values["r"], let p = values["p"],
            (1...20).contains(ln), (1...16).contains(r), (1...4).contains(p), r << ln <= 8 << 20
        else { throw .malformed("password hash parameters") }
        guard let salt = PasswordHasher.phcDecode(fields[3]), let hash = PasswordHasher.phcDecode(fields[4]),
            !salt.isEmpty, hash.count >= 16
        else { throw .malformed("password hash encoding") }
        (logN, blockSize, parallelism, self.salt, self.hash) = (ln, r, p, salt, hash)
    }
}
