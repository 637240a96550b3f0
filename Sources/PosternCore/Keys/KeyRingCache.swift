import Synchronization

/// The opened key ring, reloaded from the store now and then so that `postern keys rotate` run by
/// another process reaches a running daemon without a restart.
public final class KeyRingCache: Sendable {
    let vault: KeyVault
    private let clock: any WallClock
    private let reloadEvery: Int64
    /// The ring and when it was loaded, swapped whole: a reader holds the lock for one reference
    /// copy. (Held while the whole ring was copied, a retain per key, this lock was where every
    /// request thread queued: all of the daemon's contended-lock time under load.)
    private let state: Mutex<Loaded>

    private final class Loaded: Sendable {
        let ring: KeyRing
        let at: Int64
        init(_ ring: KeyRing, at: Int64) {
            self.ring = ring
            self.at = at
        }
    }

    /// Prepares the ring (creating keys on first start) and caches it.
    /// - Throws: `StoreError` or `CryptoError` from `KeyVault.prepare`.
    public init(vault: KeyVault, clock: any WallClock, reloadEvery: Int64 = 30) throws {
        self.vault = vault
        self.clock = clock
        self.reloadEvery = reloadEvery
        state = Mutex(Loaded(try vault.prepare(), at: clock.unixSeconds()))
    }

    /// The ring as last loaded, never reloading: for code that runs inside a store transaction
    /// (``SMSAdmission``), where a reload's read of the store could wait on the transaction
    /// itself. ``current``, which every request calls first, keeps it fresh.
    public var lastLoaded: KeyRing { state.withLock { $0 }.ring }

    /// The ring, at most `reloadEvery` seconds old (the last good one if a reload fails).
    public var current: KeyRing {
        let now = clock.unixSeconds()
        let loaded = state.withLock { $0 }
        guard now - loaded.at >= reloadEvery else { return loaded.ring }
        guard let fresh = try? vault.open() else {
            state.withLock { $0 = Loaded(loaded.ring, at: now) }
            return loaded.ring
        }
        state.withLock { $0 = Loaded(fresh, at: now) }
        return fresh
    }
}
