import Synchronization

/// A daemon's slices of counts that several daemons share in the store (issue 50): a request
/// spends one of its key's slice in memory, and only when the slice is spent does the daemon take
/// the next from the store (one short transaction of its own), so a busy key's row is written
/// about once a lease per daemon instead of once a request, and never inside a request's
/// serializable transaction. What a slice did not spend within its lease goes back to the store
/// (``collectUnused(now:all:)``, which the owner runs every lease and at its stop).
///
/// A slice starts at one and doubles each time the last one was spent before its lease ended, up
/// to the owner's most; after a lease that ended with some unspent it asks for what was spent.
/// While a take for a key is on its way to the store, the key's other requests take one each and
/// hold nothing, so a daemon never holds more than one slice of a key: the slack its owners state.
/// ``ClientLimit`` (the per-IP limit, a rate) and ``SharedWindowCounts`` (the mail caps and the
/// challenge's thresholds, fixed windows) keep their leases here.
final class SliceLeases<Key: Hashable & Sendable>: Sendable {
    /// One key's slice on this daemon.
    struct Lease: Sendable {
        /// Taken from the store and not spent yet.
        var held: Int64 = 0
        /// When (ms) `held` stops being spendable and is to go back.
        var expires: Int64 = 0
        /// What the next take asks for.
        var slice: Int64 = 1
        /// Whether a take for this key is on its way to the store.
        var taking = false
        /// What the slice was counted in: a fixed window's start (0 for a count without windows).
        /// A slice is spent only in its own epoch.
        var epoch: Int64 = 0
    }

    /// What a request that could not spend takes from the store.
    struct Take: Sendable {
        /// How many to ask for (this request's one included).
        let count: Int64
        /// What the key's last slice left unspent, to give back in the same transaction, and its epoch.
        let giveBack: Int64
        let giveBackEpoch: Int64
        /// Whether the rest of what is granted becomes the key's slice (else the request takes
        /// one only, while another take is on its way).
        let forLease: Bool
    }

    private let leases = Mutex<[Key: Lease]>([:])
    /// How long a slice may be spent, in ms.
    let leaseMillis: Int64
    /// How many keys are kept before those with nothing held are forgotten.
    private let ceiling: Int

    init(leaseMillis: Int64, ceiling: Int = 100_000) {
        self.leaseMillis = leaseMillis
        self.ceiling = ceiling
    }

    /// The most one take asks for under a limit of `limit`: 1/32 of it, at least one (so a limit
    /// under 64 is counted one by one). The slack the owners state is one such slice per daemon.
    static func largestSlice(limit: Int64) -> Int64 { max(1, limit / 32) }

    /// Spends one of `key`'s slice (nil), or says what to take from the store (under `limit`).
    func spendOrPlan(_ key: Key, now: Int64, epoch: Int64 = 0, limit: Int64) -> Take? {
        leases.withLock { leases -> Take? in
            var lease = leases[key] ?? Lease(epoch: epoch)
            if lease.held > 0, now < lease.expires, lease.epoch == epoch {
                lease.held -= 1
                leases[key] = lease
                return nil
            }
            if lease.taking { return Take(count: 1, giveBack: 0, giveBackEpoch: 0, forLease: false) }
            return Self.plan(key, &leases, now: now, epoch: epoch, maxSlice: Self.largestSlice(limit: limit), ceiling: ceiling)
                ?? Take(count: 1, giveBack: 0, giveBackEpoch: 0, forLease: false)
        }
    }

    /// For a request about to spend from `key` among others (``SharedWindowCounts/restock(_:now:)``):
    /// what to take for `key`'s slice when this daemon holds none to spend and no take is on its
    /// way; nil when it holds some (or one is on its way, or too many keys are held), and the
    /// request's own spend then does as it does. Spends nothing: everything granted is the slice
    /// (``granted(_:_:count:now:end:spending:)`` with `spending` false).
    func planRestock(_ key: Key, now: Int64, epoch: Int64 = 0, limit: Int64) -> Take? {
        leases.withLock { leases -> Take? in
            if let lease = leases[key], lease.taking || (lease.held > 0 && now < lease.expires && lease.epoch == epoch) { return nil }
            return Self.plan(key, &leases, now: now, epoch: epoch, maxSlice: Self.largestSlice(limit: limit), ceiling: ceiling)
        }
    }

    /// Sizes `key`'s next slice and marks its take on its way; nil when `ceiling` keys are held.
    private static func plan(
        _ key: Key, _ leases: inout [Key: Lease], now: Int64, epoch: Int64, maxSlice: Int64, ceiling: Int
    ) -> Take? {
        var lease = leases[key] ?? Lease(epoch: epoch)
        if leases[key] != nil {
            if lease.held > 0 { lease.slice = max(1, lease.slice - lease.held) }  // part went unspent: ask for what was spent
            else if now < lease.expires { lease.slice *= 2 }  // spent before it ran out: ask for more
        } else if leases.count >= ceiling {
            leases = leases.filter { $0.value.taking || $0.value.held > 0 || $0.value.expires > now }
            if leases.count >= ceiling { return nil }
        }
        lease.slice = min(maxSlice, lease.slice)
        let take = Take(count: lease.slice, giveBack: lease.held, giveBackEpoch: lease.epoch, forLease: true)
        lease.held = 0
        lease.taking = true
        lease.epoch = epoch
        leases[key] = lease
        return take
    }

    /// What the store granted for `take`, taken at `now`: the first is the asking request's (none
    /// when not `spending`: a ``planRestock(_:now:epoch:limit:)``), the rest the key's slice
    /// until the lease ends (and no later than `end`, a window's end).
    func granted(_ key: Key, _ take: Take, count granted: Int64, now: Int64, end: Int64 = .max, spending: Bool = true) {
        guard take.forLease else { return }
        let expires = min(now + leaseMillis, end)
        leases.withLock { leases in
            leases[key]?.taking = false
            guard granted > 0 else { return }
            leases[key]?.held += spending ? granted - 1 : granted
            leases[key]?.expires = expires
        }
    }

    /// The take for `take` failed: nothing was taken or given back (what the last slice held
    /// stays counted in the store: never more allowed).
    func failed(_ key: Key, _ take: Take) {
        guard take.forLease else { return }
        leases.withLock { $0[key]?.taking = false }
    }

    /// One a request spent and did not use after all (its request was not made): back into the
    /// key's slice while it is of `epoch` and its lease runs; false when it is not (it then stays
    /// counted: the count allows one less, never one more).
    @discardableResult
    func putBack(_ key: Key, now: Int64, epoch: Int64 = 0) -> Bool {
        leases.withLock { leases in
            guard var lease = leases[key], lease.epoch == epoch, now < lease.expires else { return false }
            lease.held += 1
            leases[key] = lease
            return true
        }
    }

    /// Whether `key` has one to spend now (for a check that counts nothing).
    func canSpend(_ key: Key, now: Int64, epoch: Int64 = 0) -> Bool {
        leases.withLock { $0[key].map { $0.held > 0 && now < $0.expires && $0.epoch == epoch } ?? false }
    }

    /// The slices past their lease (every slice with `all`, when the daemon stops) with what they
    /// left unspent, which is then held no more: for the owner to give back in one transaction.
    /// Forgets keys whose lease is long over.
    func collectUnused(now: Int64, all: Bool) -> [(key: Key, count: Int64, epoch: Int64)] {
        let forgetBefore = now - 60 * leaseMillis
        return leases.withLock { leases in
            var unused: [(key: Key, count: Int64, epoch: Int64)] = []
            for (key, lease) in leases where !lease.taking {
                if lease.held > 0, all || now >= lease.expires {
                    unused.append((key, lease.held, lease.epoch))
                    // The next take asks for what was spent of this one.
                    leases[key]?.slice = max(1, lease.slice - lease.held)
                    leases[key]?.held = 0
                } else if lease.held == 0, lease.expires < forgetBefore {
                    leases[key] = nil
                }
            }
            return unused
        }
    }
}

/// What holds slices of shared counts (``SliceLeases``) and gives back what it did not spend:
/// the daemon runs ``returnUnused(all:)`` every ``leaseMillis`` and, with `all`, at its stop.
public protocol LeaseHolder: Sendable {
    /// Whether it holds slices at all (only on a store several daemons share, with its limit on).
    var holdsLeases: Bool { get }
    /// How long a slice may be spent, in ms.
    var leaseMillis: Int64 { get }
    /// Gives back what the slices past their lease (all of them with `all`) left unspent; returns how many.
    @discardableResult
    func returnUnused(all: Bool) throws(AuthError) -> Int64
}
