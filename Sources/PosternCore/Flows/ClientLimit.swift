import Foundation
import Synchronization

/// A per-client-IP limit, as ``ClientRatePolicy`` decides it: one number per client. The public
/// endpoints' (`--ip-per-minute`) counts every request; the admin token's guess budget
/// (``AdminTokenBudget``) counts wrong tokens, and is asked first without counting
/// (``refusal(ip:)``). Each has its own bucket label, so the two never share a count.
///
/// - On a store several machines share (PostgreSQL: `isConfinedToThisMachine` false) the number is
///   in the store, moved by one upsert of one row per check, so every daemon on the database holds
///   a client to one limit: a client spread over N daemons gets the limit, not N times it. The
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
public final class ClientLimit: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any LimitWriter
    /// What this flow's reads use.
    typealias Reads = any LimitReader

    private let context: FlowContext
    /// Requests allowed in `window` ms.
    private let allowed: Int64
    private let window: Int64
    /// What the client's address is hashed with into its bucket (one per limit).
    private let label: String
    /// Whether the count is in the store (shared by every daemon) or in `local`.
    let sharedInStore: Bool
    /// Shared: client address → the moment (ms) the store's refusal ends.
    private let refusedUntil = Mutex<[String: Int64]>([:])
    /// Not shared: client address → its time (ms) under ``ClientRatePolicy``.
    private let local = Mutex<[String: Int64]>([:])
    /// How many clients a map holds before it forgets those with nothing left to say.
    static let cacheCeiling = 100_000

    /// The limit of `allowed` requests in `window` ms (0 allowed: no limit), counted under `label`.
    init(context: FlowContext, allowed: Int64, window: Int64 = ClientRatePolicy.window, label: String = "postern-client") {
        self.context = context
        self.allowed = allowed
        self.window = window
        self.label = label
        sharedInStore = !context.store.isConfinedToThisMachine
    }

    /// Counts one request of `ip`: a public request against `--ip-per-minute`
    /// (`AuthService.clientLimit`), or a wrong admin token against ``AdminTokenBudget``
    /// (`AuthService.adminTokenGuesses`).
    /// - Throws: `tooManyAttempts` past the limit (the request that is past it is then not counted);
    ///   `unavailable` when the store cannot count.
    public func admit(ip: String) throws(AuthError) {
        guard allowed > 0 else { return }
        let now = nowMillis()
        let (allowed, window) = (allowed, window)
        guard sharedInStore else {
            let wait = local.withLock { times -> Int64? in
                if times.count >= Self.cacheCeiling { times = times.filter { $0.value > now } }
                let decision = ClientRatePolicy.decide(tat: times[ip], now: now, allowed: allowed, window: window)
                if let tat = decision.tat { times[ip] = tat }
                return decision.retryAfter
            }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
            return
        }
        try refuseFromCache(ip: ip, now: now)
        let bucket = bucket(ip)
        let wait = try context.write(syncingLater: true) { (tx: Writes) in
            try tx.takeClientToken(bucket: bucket, nowMillis: now, allowed: allowed, windowMillis: window)
        }
        guard let wait else { return }
        remember(ip: ip, refusedFor: wait, now: now)
        throw .tooManyAttempts(retryAfter: wait)
    }

    /// Refuses `ip` while its next request would be refused, counting nothing: a request that
    /// passes costs no write (a read of the client's row where the count is in the store).
    /// - Throws: `tooManyAttempts` while over the limit; `unavailable` when the store cannot read.
    public func refusal(ip: String) throws(AuthError) {
        guard allowed > 0 else { return }
        let now = nowMillis()
        let (allowed, window) = (allowed, window)
        guard sharedInStore else {
            let wait = local.withLock { ClientRatePolicy.decide(tat: $0[ip], now: now, allowed: allowed, window: window).retryAfter }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
            return
        }
        try refuseFromCache(ip: ip, now: now)
        let bucket = bucket(ip)
        let tat = try context.read { (tx: Reads) in try tx.clientTokenTAT(bucket: bucket) }
        guard let wait = ClientRatePolicy.decide(tat: tat, now: now, allowed: allowed, window: window).retryAfter else { return }
        remember(ip: ip, refusedFor: wait, now: now)
        throw .tooManyAttempts(retryAfter: wait)
    }

    private func nowMillis() -> Int64 { Int64((context.clock.now().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The client's row: an HMAC of its address under the active action-code key.
    private func bucket(_ ip: String) -> [UInt8] {
        Array(context.keys.current.actionCodes.activeMAC.authenticate(Array("\(label)|\(ip)".utf8)).prefix(16))
    }

    /// Throws the cached refusal of `ip` while it lasts.
    private func refuseFromCache(ip: String, now: Int64) throws(AuthError) {
        if let until = refusedUntil.withLock({ $0[ip] }), now < until {
            throw .tooManyAttempts(retryAfter: max(1, (until - now + 999) / 1000))
        }
    }

    private func remember(ip: String, refusedFor wait: Int64, now: Int64) {
        refusedUntil.withLock { cache in
            if cache.count >= Self.cacheCeiling { cache = cache.filter { $0.value > now } }
            if cache.count < Self.cacheCeiling { cache[ip] = now + wait * 1000 }
        }
    }
}
