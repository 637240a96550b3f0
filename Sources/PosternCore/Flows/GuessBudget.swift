/// Failed guesses of one kind (6-digit codes, passwords) against one address, as stored: how many
/// since the budget was last cleared, and when the last one was.
public struct GuessRecord: Sendable, Hashable {
    /// Failures counted so far.
    public var failures: Int64
    /// Seconds since 1970 of the newest failure.
    public var lastFailureAt: Int64

    /// Creates a record.
    public init(failures: Int64, lastFailureAt: Int64) {
        self.failures = failures
        self.lastFailureAt = lastFailureAt
    }
}

/// How many wrong guesses an address may take, as pure arithmetic over its `GuessRecord`.
///
/// The first `free` failures cost nothing; after that each failure locks the address for
/// `base · 2^(failures − free)` seconds, at most `cap`. While it is locked every guess is refused,
/// the correct one included, and is not counted (so an attacker cannot make the lock permanent by
/// guessing into it). Nothing a request does resets the count — not a new code, not a new mail —
/// only a proof of the mailbox (a link completed, a reset applied), a correct guess while unlocked,
/// or `forgetAfter` seconds without a failure. The same budget applies to every address, with or
/// without an account, so a lock says nothing about who has one.
///
/// With the defaults an attacker gets about 8 guesses at a 10-minute 6-digit code (10⁻⁵ of the
/// space) and, once the lock reaches its cap, one guess a day.
public struct GuessBudget: Sendable, Hashable {
    /// Failures allowed before the first lock.
    public var free: Int64 = 5
    /// The first lock, in seconds; each later failure doubles it.
    public var base: Int64 = 30
    /// The longest lock, in seconds.
    public var cap: Int64 = 86_400
    /// Seconds without a failure after which the count is forgotten.
    public var forgetAfter: Int64 = 7 * 86_400

    /// The defaults.
    public init() {}

    /// Creates a budget.
    public init(free: Int64, base: Int64, cap: Int64, forgetAfter: Int64) {
        self.free = free
        self.base = base
        self.cap = cap
        self.forgetAfter = forgetAfter
    }

    /// The record as it stands at `now`: nil once it has been forgotten.
    public func current(_ record: GuessRecord?, now: Int64) -> GuessRecord? {
        guard let record, now - record.lastFailureAt < forgetAfter else { return nil }
        return record
    }

    /// Seconds the address stays locked after `record`'s last failure; 0 within the free failures.
    public func lockSeconds(failures: Int64) -> Int64 {
        guard failures >= free else { return 0 }
        let doublings = failures - free
        // 2^doublings overflows long before it matters: past the cap it is the cap.
        guard doublings < 40 else { return cap }
        let (product, overflow) = base.multipliedReportingOverflow(by: Int64(1) << doublings)
        return overflow ? cap : min(cap, product)
    }

    /// Seconds until a guess is allowed, or nil when one is allowed now.
    public func retryAfter(_ record: GuessRecord?, now: Int64) -> Int64? {
        guard let record = current(record, now: now) else { return nil }
        let until = FlowMath.adding(lockSeconds(failures: record.failures), to: record.lastFailureAt)
        return until > now ? until - now : nil
    }

    /// The record after one more failure at `now` (only counted while unlocked: see `retryAfter`).
    public func failing(_ record: GuessRecord?, now: Int64) -> GuessRecord {
        let failures = FlowMath.counting(current(record, now: now)?.failures ?? 0)
        return GuessRecord(failures: failures, lastFailureAt: now)
    }
}

/// The kinds of guess that have a budget per address.
public enum GuessKind: String, Sendable, CaseIterable {
    /// The 6-digit code of a sign-in mail, typed with the address.
    case sixDigitCode = "six-digit-code"
    /// A password sign-in.
    case password
}
