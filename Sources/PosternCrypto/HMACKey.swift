import Foundation
internal import COpenSSL
import Synchronization

/// An HMAC-SHA256 key whose key schedule is computed once and reused for every message.
///
/// OpenSSL's one-shot `HMAC()` fetches the algorithm and re-keys on every call (≈ 6× slower); here
/// a keyed `EVP_MAC_CTX` template is duplicated once per concurrently running thread and then
/// re-initialised with `EVP_MAC_init(ctx, NULL, 0, NULL)`, which keeps the key. A MAC context is not
/// thread-safe, so contexts are lent out from a small pool, one caller at a time.
public final class HMACKey: Sendable {
    /// Bytes in a full HMAC-SHA256 tag.
    public static let tagLength = 32

    private let template: MACContext
    private let idle: Mutex<[MACContext]>

    /// Prepares `key` (any length; 32 random bytes is the norm).
    /// - Throws: `CryptoError` when OpenSSL has no HMAC or SHA-256 (a broken installation).
    public init(key: some ContiguousBytes) throws(CryptoError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw CryptoError.openSSL("EVP_MAC_fetch(HMAC)") }
        defer { EVP_MAC_free(mac) }
        guard let ctx = EVP_MAC_CTX_new(mac) else { throw CryptoError.openSSL("EVP_MAC_CTX_new") }
        let template = MACContext(ctx)
        let ok: Int32 = "SHA256".withCString { name in
            var params = [
                postern_param_utf8(OSSL_MAC_PARAM_DIGEST, UnsafeMutablePointer(mutating: name)),
                postern_param_end(),
            ]
            return key.withUnsafeBytes { raw in
                // A zero-length key still needs a valid pointer.
                var empty: UInt8 = 0
                return withUnsafeMutablePointer(to: &empty) { fallback in
                    let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(fallback)
                    return EVP_MAC_init(ctx, base, raw.count, &params)
                }
            }
        }
        try check(ok, "EVP_MAC_init")
        self.template = template
        self.idle = Mutex([])
    }

    /// The full 32-byte tag of `message`, written to `tag` (which must hold 32 bytes).
    public func authenticate(_ message: UnsafeRawBufferPointer, into tag: UnsafeMutableRawBufferPointer) {
        precondition(tag.count >= Self.tagLength)
        let context = borrow()
        defer { giveBack(context) }
        let ctx = context.pointer
        var length = 0
        // With a valid keyed context these calls fail only on memory exhaustion; the tag would then
        // not match any stored tag, which fails closed.
        _ = EVP_MAC_init(ctx, nil, 0, nil)
        _ = EVP_MAC_update(ctx, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        _ = EVP_MAC_final(ctx, tag.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, Self.tagLength)
    }

    /// The full 32-byte tag of `message`.
    public func authenticate(_ message: some ContiguousBytes) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Self.tagLength)
        message.withUnsafeBytes { m in tag.withUnsafeMutableBytes { t in authenticate(m, into: t) } }
        return tag
    }

    private func borrow() -> MACContext {
        if let context = idle.withLock({ $0.popLast() }) { return context }
        // Duplicating the keyed template copies the prepared key schedule.
        if let copy = template.duplicate() { return copy }
        return template.duplicate() ?? template
    }

    private func giveBack(_ context: MACContext) {
        guard context !== template else { return }
        idle.withLock { $0.append(context) }
    }
}

/// Owns one `EVP_MAC_CTX`. `@unchecked Sendable`: the `Mutex` in `HMACKey` lends each context to
/// one thread at a time; the template is only read (duplicated) after initialisation.
private final class MACContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    func duplicate() -> MACContext? { EVP_MAC_CTX_dup(pointer).map(MACContext.init) }

    deinit { EVP_MAC_CTX_free(pointer) }
}
