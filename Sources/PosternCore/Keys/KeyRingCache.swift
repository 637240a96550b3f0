import Synchronization

/// The opened key ring, reloaded from the store now and then so that `postern keys rotate` run by
/// another process reaches a running daemon without a restart.
public final class KeyRingCache: Sendable {
    private let vault: KeyVault
    private let clock: any WallClock
    private let reloadEvery: Int64
    private let state: Mutex<(ring: KeyRing, loadedAt: Int64)>

    /// Prepares the ring (creating keys on first start) and caches it.
    /// - Throws: `StoreError` or `CryptoError` from `KeyVault.prepare`.
    public init(vault: KeyVault, clock: any WallClock, reloadEvery: Int64 = 30) throws {
        self.vault = vault
        self.clock = clock
        self.reloadEvery = reloadEvery
        state = Mutex((try vault.prepare(), clock.unixSeconds()))
    }

    /// The ring as last loaded, never reloading: for code that runs inside a store transaction
    /// (``SMSAdmission``), where a reload's read of the store could wait on the transaction
    /// itself. ``current``, which every request calls first, keeps it fresh.
    public var lastLoaded: KeyRing { state.withLock { $0.ring } }

    /// The ring, at most `reloadEvery` seconds old (the last good one if a reload fails).
    public var current: KeyRing {
        let now = clock.unixSeconds()
        let (ring, loadedAt) = state.withLock { ($0.ring, $0.loadedAt) }
        guard now - loadedAt >= reloadEvery else { return ring }
        guard let fresh = try? vault.open() else {
            state.withLock { $0.loadedAt = now }
            return ring
        }
        state.withLock { $0 = (fresh, now) }
        return fresh
    }
}
