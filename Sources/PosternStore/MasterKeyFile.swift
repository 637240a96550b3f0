import Foundation
import PosternCore
import PosternCrypto

/// The master key that seals the key ring's secrets: 32 random bytes, hex, in a 0600 file beside
/// the database, created on first start. Losing it makes the stored keys unusable (outstanding
/// links stop working; new keys are made); it is never logged.
public enum MasterKeyFile {
    /// The default path for a database path: `postern.db` → `postern.key`.
    public static func path(forDatabase database: String) -> String {
        let url = URL(fileURLWithPath: database)
        return url.deletingPathExtension().appendingPathExtension("key").path
    }

    /// Reads the key at `path`, creating it (0600, fsynced) when absent.
    /// - Throws: `StoreError.unavailable` when the file cannot be read or written, or
    ///   `StoreError.corrupt` when it does not hold a key, or is readable by others.
    public static func loadOrCreate(at path: String) throws -> SecretBox {
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
                throw StoreError.corrupt("\(path) is readable by other users; run chmod 600 \(path)")
            }
            guard let key = hexDecode(text.trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32 else {
                throw StoreError.corrupt("\(path) does not hold a 32-byte hex key")
            }
            return try SecretBox(key: key)
        }
        let key = try SecureRandom.bytes(32)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST { return try loadOrCreate(at: path) }  // another process made it first
            throw StoreError.unavailable("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let text = Array((key.map { String(format: "%02x", $0) }.joined() + "\n").utf8)
        guard write(fd, text, text.count) == text.count, fsync(fd) == 0 else {
            throw StoreError.unavailable("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return try SecretBox(key: key)
    }

    private static func hexDecode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}
