/// The limits' persister: per-address rate limits, fixed-window counters (the SMS caps), the
/// per-client token buckets and the guess budgets, all keyed by opaque buckets (never an address,
/// a number or an IP in the clear).
public protocol LimitReader {
    /// The failed guesses counted against `bucket` (an opaque key, never an address in the clear).
    func guessRecord(bucket: [UInt8]) throws -> GuessRecord?
    /// The `tat` (ms) a client bucket holds (``ClientRatePolicy``), nil when it has no row: what a
    /// check that counts nothing reads.
    func clientTokenTAT(bucket: [UInt8]) throws -> Int64?
}

/// Limit changes.
public protocol LimitWriter: LimitReader {
    /// Counts one event against `bucket` (an opaque key, never an address in the clear): nil when
    /// allowed, else the seconds until it would be. `interval`: least seconds between two events
    /// (0: none); `perHour`: most events in a rolling hour window (0: none).
    func rateLimit(bucket: [UInt8], now: Int64, interval: Int64, perHour: Int64) throws -> Int64?
    /// Counts one event against `bucket` (an opaque key) in fixed windows of `window` seconds
    /// (starting at multiples of it): nil when fewer than `limit` were counted in the current
    /// window (this one is counted), else the seconds until the next window. One row per bucket,
    /// reset in place when its window has passed: for budgets too large for a row per event (a
    /// country's SMS an hour, all SMS a day), and the rows stay as few as the buckets.
    func countInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws -> Int64?
    /// Takes up to `count` from `bucket`'s current window (as ``countInWindow(bucket:now:window:limit:)``
    /// counts, fixed windows of `window` seconds) while fewer than `limit` are counted in it:
    /// how many it took (0: the window is full). The row is locked for the read that decides
    /// (PostgreSQL: `FOR UPDATE` in a READ COMMITTED transaction of its own, made only of such
    /// takes and their returns), so daemons taking from one hot row never fail each other's
    /// transactions: ``SharedWindowCounts`` takes slices this way.
    func takeInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64, upTo count: Int64) throws -> Int64
    /// Gives back `count` taken by ``takeInWindow(bucket:now:window:limit:upTo:)`` and not used,
    /// while the row still counts the window that starts at `windowStart` (a later window
    /// starts from 0 anyway).
    func returnInWindow(bucket: [UInt8], windowStart: Int64, count: Int64) throws
    /// Forgets at most `limit` rate-limit events at or before `horizon` (of every bucket: a bucket
    /// forgets its own old events whenever it counts one, but most buckets never count again);
    /// returns how many.
    func pruneRateEvents(atOrBefore horizon: Int64, limit: Int) throws -> Int
    /// Forgets at most `limit` fixed-window counters (``countInWindow(bucket:now:window:limit:)``)
    /// whose window started at or before `horizon`; returns how many.
    func pruneRateWindows(startedBy horizon: Int64, limit: Int) throws -> Int

    /// Takes up to `count` requests of a client (an opaque `bucket`, never an IP address in the
    /// clear) against `allowed` requests in `window` (``ClientRatePolicy``) at `now`, times in the
    /// caller's ticks (``ClientLimit``: microseconds): as many as fit, as
    /// ``ClientRatePolicy/take(tat:now:allowed:window:upTo:)`` says. One atomic upsert of one row,
    /// so every daemon on the database shares one limit per client and concurrent takes never
    /// serialize on a snapshot.
    func takeClientTokens(bucket: [UInt8], now: Int64, allowed: Int64, window: Int64, upTo count: Int64) throws -> ClientTokenGrant
    /// Gives back `count` requests a ``takeClientTokens(bucket:now:allowed:window:upTo:)`` took and
    /// nobody used (a lease that ran out): the bucket's `tat` moves back `count` steps. No row
    /// (pruned as full): nothing to give back.
    func returnClientTokens(bucket: [UInt8], count: Int64, allowed: Int64, window: Int64) throws
    /// Forgets at most `limit` client buckets that are full again at `now` (their `tat` at or
    /// before it, in the buckets' ticks: the row says nothing more than a missing one); returns how many.
    func pruneClientBuckets(fullBy now: Int64, limit: Int) throws -> Int

    /// Replaces the failed guesses counted against `bucket`; nil clears them.
    func setGuessRecord(bucket: [UInt8], _ record: GuessRecord?) throws
    /// Forgets at most `limit` guess budgets whose last failure is at or before `horizon`; returns
    /// how many.
    func pruneGuessRecords(lastFailureBy horizon: Int64, limit: Int) throws -> Int
}

extension LimitWriter {
    /// Counts one request of a client against `allowed` in `windowMillis`, times in milliseconds:
    /// nil when allowed, else the seconds until one would be.
    public func takeClientToken(bucket: [UInt8], nowMillis: Int64, allowed: Int64, windowMillis: Int64) throws -> Int64? {
        let grant = try takeClientTokens(bucket: bucket, now: nowMillis, allowed: allowed, window: windowMillis, upTo: 1)
        return grant.granted > 0 ? nil : ClientRatePolicy.retryAfter(tat: grant.tat, now: nowMillis, allowed: allowed, window: windowMillis)
    }

    /// Counts one request of a client against `perMinute` (``ClientRatePolicy``, a minute's window).
    public func takeClientToken(bucket: [UInt8], nowMillis: Int64, perMinute: Int64) throws -> Int64? {
        try takeClientToken(bucket: bucket, nowMillis: nowMillis, allowed: perMinute, windowMillis: ClientRatePolicy.window)
    }
}

/// Fixed windows of the counters (``LimitWriter/countInWindow(bucket:now:window:limit:)``): a
/// window of `window` seconds starts at each multiple of it.
public enum FixedWindow {
    /// The start of the window of `window` seconds (at least 1) that holds `now`.
    public static func start(of now: Int64, window: Int64) -> Int64 {
        let window = max(1, window)
        return now - ((now % window) + window) % window
    }
}
