import Foundation
internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// Fills `buffer` with random bytes.
    /// - Throws: `CryptoError` when the DRBG cannot be seeded (no entropy source).
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        try check(RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)), "RAND_bytes")
    }

    /// `count` random bytes.
    /// - Throws: `CryptoError` when the DRBG fails.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { raw in
            raw.isEmpty ? 1 : RAND_bytes(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(raw.count))
        }
        try check(ok, "RAND_bytes")
        return out
    }

    /// A uniformly distributed integer in `0..<upperBound` (rejection sampling, no modulo bias).
    /// - Throws: `CryptoError` when the DRBG fails.
    public static func uniform(below upperBound: UInt32) throws(CryptoError) -> UInt32 {
        precondition(upperBound > 0)
        let limit = UInt32.max - UInt32.max % upperBound
        while true {
            let bytes = try bytes(4)
            let value = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            if value < limit { return value % upperBound }
        }
    }
}

/// Comparisons whose time does not depend on where two secrets differ.
public enum ConstantTime {
    /// True when `a` and `b` have the same length and bytes; time depends only on the length.
    public static func equals(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
        a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                guard pa.count == pb.count else { return false }
                guard let x = pa.baseAddress, let y = pb.baseAddress else { return pa.count == 0 }
                return CRYPTO_memcmp(x, y, pa.count) == 0
            }
        }
    }
}

extension SecureRandom {
    /// Fills `buffer` (at most 256 bytes) from a per-thread buffer of DRBG output refilled 4 KiB at a
    /// time: for the hot path of minting codes, where one `RAND_bytes` call per 16-byte nonce costs
    /// more than the HMAC. Bytes are never handed out twice. (Not fork-safe: Postern does not fork.)
    /// - Throws: `CryptoError` when the DRBG fails.
    public static func fillBuffered(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard buffer.count <= 256 else { return try fill(buffer) }
        let pool = ThreadRandomPool.current()
        if pool.offset + buffer.count > ThreadRandomPool.size {
            let ok = pool.bytes.withUnsafeMutableBufferPointer {
                RAND_bytes($0.baseAddress, Int32(ThreadRandomPool.size))
            }
            try check(ok, "RAND_bytes")
            pool.offset = 0
        }
        pool.bytes.withUnsafeMutableBytes { source in
            let range = pool.offset..<(pool.offset + buffer.count)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[range]))
            // Wipe what was handed out so it is not kept in memory.
            UnsafeMutableRawBufferPointer(rebasing: source[range]).initializeMemory(as: UInt8.self, repeating: 0)
        }
        pool.offset += buffer.count
    }
}

/// One thread's buffer of random bytes, reached through a pthread key; freed with its thread.
private final class ThreadRandomPool {
    static let size = 4096
    var bytes = [UInt8](repeating: 0, count: size)
    var offset = size

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ThreadRandomPool>.fromOpaque(pointer).release() }
        }
        return key
    }()

    static func current() -> ThreadRandomPool {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadRandomPool>.fromOpaque(pointer).takeUnretainedValue()
        }
        let pool = ThreadRandomPool()
        pthread_setspecific(key, Unmanaged.passRetained(pool).toOpaque())
        return pool
    }
}
