import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// `postern keys rotate`, run by another process, reaches a running daemon through the cache's
/// reload — and a reload that fails keeps the last good ring.
@Suite("Key ring reload")
struct KeyRingReloadTests {
    /// A store whose reads can be made to fail, over the in-memory one.
    final class FlakyStore: Store, @unchecked Sendable {
        // `failing` is set by the test between reads, never during one.
        let inner = InMemoryStore()
        var failing = false
        var mailDoorbell: MailDoorbell { inner.mailDoorbell }
        func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
            if failing { throw StoreError.unavailable("the disk is gone") }
            return try inner.read(body)
        }
        func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
            if failing { throw StoreError.unavailable("the disk is gone") }
            return try inner.write(body)
        }
    }

    @Test("a rotation by another process is seen after the reload interval, not before; a failed reload keeps the ring")
    func reload() throws {
        let clock = ManualClock()
        let store = FlakyStore()
        let box = try SecretBox(key: Array(repeating: 3, count: 32))
        let daemon = try KeyRingCache(vault: KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 86_400), clock: clock)
        let before = daemon.current.actionCodes.activeKeyID
        let signer = daemon.current.idTokenSigner.keyID
        // `postern keys rotate` in another process: its own vault over the same store.
        let operatorVault = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 86_400)
        _ = try operatorVault.rotate(.actionCode)
        _ = try operatorVault.rotate(.idToken)
        clock.advance(by: 29)
        #expect(daemon.current.actionCodes.activeKeyID == before, "not before the interval")
        clock.advance(by: 2)
        let after = daemon.current
        #expect(after.actionCodes.activeKeyID != before)
        #expect(after.idTokenSigner.keyID != signer)
        // The retired keys still verify what they signed.
        #expect(after.idTokenVerifiers.contains { $0.keyID == signer })
        #expect(after.actionCodes.digest([1, 2, 3], keyID: before) != nil)
        // A reload that fails keeps the last good ring (and tries again an interval later).
        store.failing = true
        clock.advance(by: 31)
        #expect(daemon.current.actionCodes.activeKeyID == after.actionCodes.activeKeyID)
        store.failing = false
        _ = try operatorVault.rotate(.actionCode)
        clock.advance(by: 31)
        #expect(daemon.current.actionCodes.activeKeyID != after.actionCodes.activeKeyID)
    }
}
