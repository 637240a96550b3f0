import Foundation
import Synchronization

/// A per-client-IP limit, as ``ClientRatePolicy`` decides it: one number per client. The public
/// endpoints' (`--ip-per-minute`) counts every request; the admin token's guess budget
/// (``AdminTokenBudget``) counts wrong tokens, and is asked first without counting
/// (``refusal(ip:)``). Each has its own bucket label, so the two never share a count.
///
/// - On a store several machines share (PostgreSQL: `isConfinedToThisMachine` false) the number is
///   in the store, so every daemon on the database holds a client to one limit: a client spread
///   over N daemons gets the limit, not N times it. A daemon takes a client's budget in slices
///   (``SliceLeases``): one upsert of the client's row takes a slice, the requests that follow on this
///   daemon spend it in memory, and what a lease did not spend within ``leaseMillis`` goes back
///   to the row (with the client's next take, or by ``returnUnused(all:)``, which the daemon runs
///   every ``leaseMillis`` and at its stop). A slice starts at one request and doubles each time
///   the last one was spent before its lease ended, up to ``maxSlice(allowed:)`` (1/32 of the
///   limit, at least one), so a quiet client costs one upsert a request, as before, and a busy one
///   about one a second per daemon. The exactness this buys: a slice is counted in the store when
///   it is taken, so the store never grants more than the limit; a request may spend a token up to
///   a lease after it was counted, so over any window a client gets at most the limit plus one
///   slice per daemon it reaches (and, between a take and its return, may get up to one slice per
///   daemon less). With a limit under 64 a slice is one request: exact, as before.
///   The daemon also keeps a cache of the store's refusals (client → until when), so that a
///   client already over the limit costs no database write until its wait is over. Losing the
///   cache or the leases (a restart, another daemon) only means asking the store again; it never
///   allows what the store would refuse (a lease lost unreturned stays counted). Refusal waits
///   are whole seconds (rounded up), so a refused client may be refused by this daemon up to a
///   second longer than the store would. The bucket is an HMAC of the address under the active
///   action-code key, as the per-address limits', so the table holds no client addresses.
/// - On a store one machine serves (a SQLite file) the number is kept in this process's memory:
///   the check then costs no write (bench/pg measured the write at a third of SQLite's send-link
///   throughput), and a restart forgets it (it was a minute's worth). Several daemons on one
///   SQLite file would each count their own.
public final class ClientLimit: LeaseHolder {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any LimitWriter
    /// What this flow's reads use.
    typealias Reads = any LimitReader

    private let context: FlowContext
    /// Requests allowed in `window`.
    private let allowed: Int64
    /// The window in microseconds: the ticks every count of this limit is in (the store's rows,
    /// the in-process times), so a limit is exact up to a million requests a second per client.
    private let window: Int64
    /// What the client's address is hashed with into its bucket (one per limit).
    private let label: String
    /// Whether the count is in the store (shared by every daemon) or in `local`.
    let sharedInStore: Bool
    /// Shared: client address → the moment (ms) the store's refusal ends.
    private let refusedUntil = Mutex<[String: Int64]>([:])
    /// Shared: each client's slice of its budget on this daemon.
    private let leases: SliceLeases<String>
    /// How long a slice may be spent before its rest goes back, in ms.
    public var leaseMillis: Int64 { leases.leaseMillis }
    /// Not shared: client address → its time (ms) under ``ClientRatePolicy``.
    private let local = Mutex<[String: Int64]>([:])
    /// How many clients a map holds before it forgets those with nothing left to say.
    static let cacheCeiling = 100_000

    /// The limit of `allowed` requests in `window` ms (0 allowed: no limit), counted under `label`.
    /// `leaseMillis`: how long a daemon may spend a slice before its rest goes back (shared only).
    init(
        context: FlowContext, allowed: Int64, window: Int64 = ClientRatePolicy.window, label: String = "postern-client",
        leaseMillis: Int64 = ClientLimit.defaultLeaseMillis
    ) {
        self.context = context
        self.allowed = allowed
        self.window = window * (Self.ticksPerSecond / 1_000)
        self.label = label
        leases = SliceLeases(leaseMillis: leaseMillis, ceiling: Self.cacheCeiling)
        sharedInStore = !context.store.isConfinedToThisMachine
    }

    /// The limit's ticks a second: every count is in microseconds.
    static let ticksPerSecond: Int64 = 1_000_000

    /// A second: how long a slice may be spent, and how often the daemon gives back what was not.
    public static let defaultLeaseMillis: Int64 = 1_000

    /// The most requests one take asks for: 1/32 of the limit, at least one (so a limit under 64
    /// is counted request by request).
    public static func maxSlice(allowed: Int64) -> Int64 { SliceLeases<String>.largestSlice(limit: allowed) }

    /// Whether this limit counts in the store (several daemons) and so holds leases to give back.
    public var holdsLeases: Bool { sharedInStore && allowed > 0 }

    /// Counts one request of `ip`: a public request against `--ip-per-minute`
    /// (`AuthService.clientLimit`), or a wrong admin token against ``AdminTokenBudget``
    /// (`AuthService.adminTokenGuesses`).
    /// - Throws: `tooManyAttempts` past the limit (the request that is past it is then not counted);
    ///   `unavailable` when the store cannot count.
    public func admit(ip: String) throws(AuthError) {
        guard allowed > 0 else { return }
        let (now, nowMicros) = nowMillisAndMicros()
        let (allowed, window) = (allowed, window)
        guard sharedInStore else {
            let wait = local.withLock { times -> Int64? in
                if times.count >= Self.cacheCeiling { times = times.filter { $0.value > nowMicros } }
                let decision = ClientRatePolicy.decide(tat: times[ip], now: nowMicros, allowed: allowed, window: window, ticksPerSecond: Self.ticksPerSecond)
                if let tat = decision.tat { times[ip] = tat }
                return decision.retryAfter
            }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
            return
        }
        try refuseFromCache(ip: ip, now: now)
        // Spend the slice, or take the next (and give back what the last one left).
        guard let take = leases.spendOrPlan(ip, now: now, limit: allowed) else { return }
        let bucket = bucket(ip)
        let grant: ClientTokenGrant
        do {
            grant = try context.write(syncingLater: true) { (tx: Writes) in
                if take.giveBack > 0 { try tx.returnClientTokens(bucket: bucket, count: take.giveBack, allowed: allowed, window: window) }
                return try tx.takeClientTokens(bucket: bucket, now: nowMicros, allowed: allowed, window: window, upTo: take.count)
            }
        } catch {
            leases.failed(ip, take)
            throw error
        }
        leases.granted(ip, take, count: grant.granted, now: now)
        guard grant.granted == 0 else { return }
        let wait = ClientRatePolicy.retryAfter(tat: grant.tat, now: nowMicros, allowed: allowed, window: window, ticksPerSecond: Self.ticksPerSecond)
        remember(ip: ip, refusedFor: wait, now: now)
        throw .tooManyAttempts(retryAfter: wait)
    }

    /// Gives back to the store what this daemon's leases took and did not spend: those past their
    /// end, or all of them (`all`, when the daemon stops; they are then no longer spendable here),
    /// in one transaction. Forgets leases long over. Returns how many requests went back.
    /// - Throws: `unavailable` when the store cannot take them (they stay counted: a client may
    ///   get up to a slice less from the other daemons until its bucket refills).
    @discardableResult
    public func returnUnused(all: Bool = false) throws(AuthError) -> Int64 {
        guard holdsLeases else { return 0 }
        let unused = leases.collectUnused(now: nowMillis(), all: all)
        guard !unused.isEmpty else { return 0 }
        let (allowed, window) = (allowed, window)
        let buckets = unused.map { (bucket: bucket($0.key), count: $0.count) }
        try context.write(syncingLater: true) { (tx: Writes) in
            for item in buckets { try tx.returnClientTokens(bucket: item.bucket, count: item.count, allowed: allowed, window: window) }
        }
        return buckets.reduce(0) { $0 + $1.count }
    }

    /// Refuses `ip` while its next request would be refused, counting nothing: a request that
    /// passes costs no write (a read of the client's row where the count is in the store).
    /// - Throws: `tooManyAttempts` while over the limit; `unavailable` when the store cannot read.
    public func refusal(ip: String) throws(AuthError) {
        guard allowed > 0 else { return }
        let (now, nowMicros) = nowMillisAndMicros()
        let (allowed, window) = (allowed, window)
        guard sharedInStore else {
            let wait = local.withLock {
                ClientRatePolicy.decide(tat: $0[ip], now: nowMicros, allowed: allowed, window: window, ticksPerSecond: Self.ticksPerSecond).retryAfter
            }
            if let wait { throw .tooManyAttempts(retryAfter: wait) }
            return
        }
        try refuseFromCache(ip: ip, now: now)
        if leases.canSpend(ip, now: now) { return }
        let bucket = bucket(ip)
        let tat = try context.read { (tx: Reads) in try tx.clientTokenTAT(bucket: bucket) }
        guard let wait = ClientRatePolicy.decide(tat: tat, now: nowMicros, allowed: allowed, window: window, ticksPerSecond: Self.ticksPerSecond).retryAfter
        else { return }
        remember(ip: ip, refusedFor: wait, now: now)
        throw .tooManyAttempts(retryAfter: wait)
    }

    private func nowMillis() -> Int64 { nowMillisAndMicros().millis }

    /// Now in milliseconds (leases, the refusal cache) and in microseconds (the counts).
    private func nowMillisAndMicros() -> (millis: Int64, micros: Int64) {
        let micros = Int64((context.clock.now().timeIntervalSince1970 * Double(Self.ticksPerSecond)).rounded(.down))
        return (micros / 1_000, micros)
    }

    /// The client's row: an HMAC of its address under the active action-code key. Counted in
    /// microseconds since 0.11 (milliseconds before, under the bare label: a limit above 60,000
    /// a minute could not be counted in them), so the name says the unit: a daemon of either
    /// version never reads the other's row in the wrong unit while they run side by side.
    private func bucket(_ ip: String) -> [UInt8] {
        Array(context.keys.current.actionCodes.activeMAC.authenticate(Array("\(label)|us|\(ip)".utf8)).prefix(16))
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
