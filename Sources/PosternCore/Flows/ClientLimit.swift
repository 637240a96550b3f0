import Foundation
import Synchronization

/// The per-client-IP limit of the public endpoints (`--ip-per-minute`), as ``ClientRatePolicy``
/// decides it: one number per client.
///
/// - On a store several machines share (PostgreSQL: `isConfinedToThisMachine` false) the number is
///   in the store, moved by one upsert of one row per check, so every daemon on the database holds
///   a client to one limit: a client spread over N daemons gets `perMinute`, not N times it. The
///   daemon keeps in memory only a cache of the store's refusals (client → until when), so that a
///   client already over the limit costs no database write until its wait is over. Losing the
///   cache (a restart, another daemon) only means asking the store again; it never allows what the
///   store would refuse. Its waits are whole seconds (rounded up), so a refused client may be
///   refused by this daemon up to a second longer than the store would. The bucket is an HMAC of
///   the address under the active action-code key, as the per-address limits', so the table
///   holds no client addresses.
/// - On a store one machine serves (a SQLite file) the number is kept in this process's memory:
///   the check then costs no write (bench/pg measured the write at a third of SQLite's send-link
///   throughput), and a restart forgets it (it was a minute's worth). Several daemons on one
///   SQLite file would each count their own.
final class ClientLimit: Sendable {
    private let context: FlowContext
    private let perMinute: Int64
    /// Whether the count is in the store (shared by every daemon) or in `local`.
    let sharedInStore: Bool
    /// Shared: client address → the moment (ms) the store's refusal ends.
    private let refusedUntil = Mutex<[String: Int64]>([:])
    /// Not shared: client address → its time (ms) under ``ClientRatePolicy``.
    private let local = Mutex<[String: Int64]>([:])
    /// How many clients a map holds before it forgets those with nothing left to say.
    static let cacheCeiling = 100_000

    init(context: FlowContext, perMinute: Int64) {
        self.context = context
        self.perMinute = perMinute
        sharedInStore = !context.store.isConfinedToThisMachine
    }

    /// Counts one request of `ip`.
    /// - Throws: `tooManyAttempts` past the limit; `unavailable` when the store cannot count.
    func admit(ip: String) throws(AuthError) {
        guard perMinute > 0 else { return }
        let now = Int64((context.clock.now().timeIntervalSince1970 * 1000).rounded(.down))
        let perMinute = perMinute
        guard sharedInStore else {
            let wait = local.withLock { times -> Int64? in
                if times.count >= Self.cacheCeiling { times = times.filter { $0.value > now } }
                let decision = ClientRatePolicy.decide(tat: times[ip], now: now, perMinute: perMinute)
                if let tat = decision.tat { times[ip] = tat }
                return decision.retryAfter
            }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
            return
        }
        if let until = refusedUntil.withLock({ $0[ip] }), now < until {
            throw .tooManyAttempts(retryAfter: max(1, (until - now + 999) / 1000))
        }
        let bucket = Array(context.keys.current.actionCodes.activeMAC.authenticate(Array("postern-client|\(ip)".utf8)).prefix(16))
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
