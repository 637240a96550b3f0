import Foundation
import Synchronization

/// The per-client-IP limit of the public endpoints (`--ip-per-minute`), counted in the store
/// (``ClientRatePolicy``: one upsert of one row per check), so that every daemon on one database
/// holds a client to one limit: a client spread over N daemons gets `perMinute`, not N times it.
///
/// The daemon keeps in memory only a cache of the store's refusals (client → until when), so
/// that a client already over the limit costs no database write until its wait is over. Losing
/// the cache (a restart, another daemon) only means asking the store again; it never allows what
/// the store would refuse. Its waits are whole seconds (rounded up), so a refused client may be
/// refused by this daemon up to a second longer than the store would.
///
/// The bucket is an HMAC of the address under the active action-code key, as the per-address
/// limits', so the table holds no client addresses.
final class ClientLimit: Sendable {
    private let context: FlowContext
    private let perMinute: Int64
    /// Client address → the moment (ms) its refusal ends.
    private let refusedUntil = Mutex<[String: Int64]>([:])
    /// How many refused clients the cache holds before it forgets the ones whose wait is over.
    static let cacheCeiling = 100_000

    init(context: FlowContext, perMinute: Int64) {
        self.context = context
        self.perMinute = perMinute
    }

    /// Counts one request of `ip`.
    /// - Throws: `tooManyAttempts` past the limit; `unavailable` when the store cannot count.
    func admit(ip: String) throws(AuthError) {
        guard perMinute > 0 else { return }
        let now = Int64((context.clock.now().timeIntervalSince1970 * 1000).rounded(.down))
        if let until = refusedUntil.withLock({ $0[ip] }), now < until {
            throw .tooManyAttempts(retryAfter: max(1, (until - now + 999) / 1000))
        }
        let bucket = Array(context.keys.current.actionCodes.activeMAC.authenticate(Array("postern-client|\(ip)".utf8)).prefix(16))
        let perMinute = perMinute
        let wait = try context.write(syncingLater: true) { tx in
            try tx.takeClientToken(bucket: bucket, nowMillis: now, perMinute: perMinute)
        }
        guard let wait else { return }
        refusedUntil.withLock { cache in
            if cache.count >= Self.cacheCeiling { cache = cache.filter { $0.value > now } }
            if cache.count < Self.cacheCeiling { cache[ip] = now + wait * 1000 }
        }
        throw .tooManyAttempts(retryAfter: wait)
    }
}
