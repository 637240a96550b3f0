internal import CCrypt

/// Verifies bcrypt hashes (`$2a$`, `$2b$`, `$2y$`) through libxcrypt's `crypt_r`: the hashes of
/// accounts imported from Supabase (or anything else on bcrypt). Postern never makes new ones.
public enum Bcrypt {
    /// True when `encoded` has the shape of a bcrypt hash: `$2a$`/`$2b$`/`$2y$`, a two-digit cost
    /// from 04 to 16, then 53 characters of bcrypt's base64 (22 of salt, 31 of hash). bcrypt
    /// allows up to 31, but a check costs 2^cost rounds (16: seconds; 31: days): an imported hash
    /// above 16 would stall each sign-in to its address, and through `PasswordCheckPacer`, which
    /// pads every check to the slowest scheme's time, every password sign-in.
    public static func isHash(_ encoded: String) -> Bool {
        let bytes = Array(encoded.utf8)
        guard bytes.count == 60, bytes[0] == 0x24, bytes[1] == 0x32, [0x61, 0x62, 0x79].contains(bytes[2]), bytes[3] == 0x24,
            bytes[6] == 0x24, let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...16).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { byte in
            byte == 0x2E || byte == 0x2F || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    /// True when `password` matches `encoded`, compared in constant time.
    ///
    /// A password with a NUL byte never matches: C would see only the part before it.
    /// - Throws: `CryptoError.malformed` when `encoded` is not a bcrypt hash, or when `crypt_r`
    ///   refuses it.
    public static func verify(_ password: String, against encoded: String) throws(CryptoError) -> Bool {
        guard isHash(encoded) else { throw .malformed("bcrypt hash") }
        guard !password.utf8.contains(0) else { return false }
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        let size = MemoryLayout<crypt_data>.size
        let raw = UnsafeMutableRawPointer(data)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        // The work area holds state derived from the password: wipe it before giving it back.
        defer {
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            data.deallocate()
        }
        guard let result = crypt_r(password, encoded, data) else { throw .malformed("bcrypt hash (crypt_r refused it)") }
        let computed = Array(String(cString: result).utf8)
        // libxcrypt answers a setting it cannot use with a short failure token ("*0", "*1").
        guard computed.count == 60 else { throw .malformed("bcrypt hash (crypt_r refused it)") }
        return ConstantTime.equals(computed, Array(encoded.utf8))
    }
}
