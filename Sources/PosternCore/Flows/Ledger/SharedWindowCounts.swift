import Foundation

/// The fixed-window counters every public mail request moves (the mail caps' per domain and in
/// all, the challenge's per client IP and per recipient domain) on a store several daemons share,
/// counted outside the request's transaction (issue 50). Counted inside it, as on SQLite, each is
/// a row every concurrent request writes: on PostgreSQL their serializable transactions then fail
/// each other and run again, one after another. Here a daemon takes a busy counter's count in
/// slices (``SliceLeases``, ``LimitWriter/takeInWindow(bucket:now:window:limit:upTo:)``: one short
/// READ COMMITTED transaction, the row locked), a request spends one in memory, and a request
/// that is then not made (its address's own limit, the challenge or the other cap refused it, its
/// write failed) puts it back.
///
/// How exact: a slice is counted in the row when it is taken and is spent only in its own window,
/// so a window never counts more than its limit, whatever the daemons. A daemon holding part of a
/// slice holds it from the others until its lease ends (a second) and it goes back: they may be
/// refused up to one slice per daemon early. A slice is at most 1/32 of the limit, so a limit under
/// 64 is counted one by one. A daemon that dies holding a slice leaves it counted (less allowed,
/// never more) until the window ends.
final class SharedWindowCounts: LeaseHolder {
    /// The persisters its transactions use.
    typealias Writes = any LimitWriter

    private let context: FlowContext
    private let leases: SliceLeases<[UInt8]>

    /// It holds slices whenever it exists (it is made only for a store several daemons share).
    var holdsLeases: Bool { true }
    var leaseMillis: Int64 { leases.leaseMillis }

    init(context: FlowContext, leaseMillis: Int64 = ClientLimit.defaultLeaseMillis) {
        self.context = context
        leases = SliceLeases(leaseMillis: leaseMillis, ceiling: ClientLimit.cacheCeiling)
    }

    /// One counted in a window, to put back if its request is not made.
    struct Counted: Sendable {
        let bucket: [UInt8]
        let windowStart: Int64
    }

    /// Counts one against `bucket`'s window of `window` seconds holding `now` (seconds), under
    /// `limit`: the count, or nil when the window is full (nothing counted).
    /// - Throws: `unavailable` when the store cannot count.
    func count(_ bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws(AuthError) -> Counted? {
        let start = FixedWindow.start(of: now, window: window)
        let (nowMillis, endMillis) = (millisNow(), (start + max(1, window)) * 1_000)
        let counted = Counted(bucket: bucket, windowStart: start)
        guard let take = leases.spendOrPlan(bucket, now: nowMillis, epoch: start, limit: limit) else {
            return counted
        }
        let taken: Int64
        do {
            taken = try context.write(syncingLater: true) { (tx: Writes) in
                if take.giveBack > 0 { try tx.returnInWindow(bucket: bucket, windowStart: take.giveBackEpoch, count: take.giveBack) }
                return try tx.takeInWindow(bucket: bucket, now: now, window: window, limit: limit, upTo: take.count)
            }
        } catch {
            leases.failed(bucket, take)
            throw error
        }
        leases.granted(bucket, take, count: taken, now: nowMillis, end: endMillis)
        return taken > 0 ? counted : nil
    }

    /// One count a request is about to make: its bucket and the window's limit.
    struct Wanted: Sendable {
        let bucket: [UInt8]
        let limit: Int64
    }

    /// Takes, in one transaction, the slices of those of `wanted` (hourly windows holding `now`)
    /// this daemon holds nothing of: a recipient domain or a client not seen within the last lease.
    /// Each would otherwise cost a transaction of its own in ``count(_:now:window:limit:)``, which
    /// then spends from these slices in memory. Nothing is spent here and no refusal is decided: a
    /// slice the store refuses leaves its count to take it again (and refuse); a failure leaves
    /// them all to it. The rows are locked in the order of their buckets, as ``returnUnused(all:)``
    /// locks its own, so that two daemons' transactions never wait on each other in a circle.
    func restock(_ wanted: [Wanted], now: Int64) {
        let window = RateLimitPolicy.window
        let start = FixedWindow.start(of: now, window: window)
        let (nowMillis, endMillis) = (millisNow(), (start + window) * 1_000)
        let takes = wanted.sorted { $0.bucket.lexicographicallyPrecedes($1.bucket) }.compactMap { one in
            leases.planRestock(one.bucket, now: nowMillis, epoch: start, limit: one.limit).map { (one, $0) }
        }
        guard !takes.isEmpty else { return }
        let granted: [Int64]
        do {
            granted = try context.write(syncingLater: true) { (tx: Writes) in
                try takes.map { one, take in
                    if take.giveBack > 0 { try tx.returnInWindow(bucket: one.bucket, windowStart: take.giveBackEpoch, count: take.giveBack) }
                    return try tx.takeInWindow(bucket: one.bucket, now: now, window: window, limit: one.limit, upTo: take.count)
                }
            }
        } catch {
            for (one, take) in takes { leases.failed(one.bucket, take) }
            return
        }
        for ((one, take), count) in zip(takes, granted) {
            leases.granted(one.bucket, take, count: count, now: nowMillis, end: endMillis, spending: false)
        }
    }

    /// Puts back what a request counted and did not use: into this daemon's slice while it runs,
    /// else into the store (in one transaction; if that fails they stay counted: less allowed).
    func uncount(_ counted: [Counted]) {
        let now = millisNow()
        let rest = counted.filter { !leases.putBack($0.bucket, now: now, epoch: $0.windowStart) }
        guard !rest.isEmpty else { return }
        _ = try? context.write(syncingLater: true) { (tx: Writes) in
            for one in rest { try tx.returnInWindow(bucket: one.bucket, windowStart: one.windowStart, count: 1) }
        }
    }

    /// Gives back what the slices past their lease left unspent (all of them with `all`), in one
    /// transaction; returns how many.
    /// - Throws: `unavailable` when the store cannot take them (they stay counted until the window ends).
    @discardableResult
    func returnUnused(all: Bool) throws(AuthError) -> Int64 {
        let unused = leases.collectUnused(now: millisNow(), all: all).sorted { $0.key.lexicographicallyPrecedes($1.key) }
        guard !unused.isEmpty else { return 0 }
        try context.write(syncingLater: true) { (tx: Writes) in
            for slice in unused { try tx.returnInWindow(bucket: slice.key, windowStart: slice.epoch, count: slice.count) }
        }
        return unused.reduce(0) { $0 + $1.count }
    }

    private func millisNow() -> Int64 { Int64((context.clock.now().timeIntervalSince1970 * 1000).rounded(.down)) }
}
