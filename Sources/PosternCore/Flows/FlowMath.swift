/// Arithmetic on values the flows read from the database, which cannot trap whatever a row holds
/// (an import, an older version or a hand edit may have put anything there): a daemon must not
/// die, again after every restart, on one account's numbers.
enum FlowMath {
    /// `now` plus `seconds`, stopping at `Int64.max`: a time past the end of time is never reached.
    static func adding(_ seconds: Int64, to now: Int64) -> Int64 {
        let (sum, overflow) = now.addingReportingOverflow(seconds)
        return overflow ? Int64.max : sum
    }

    /// One more, stopping at `Int64.max`: a count of failures or tries means the same there.
    static func counting(_ count: Int64) -> Int64 {
        let (sum, overflow) = count.addingReportingOverflow(1)
        return overflow ? Int64.max : sum
    }

    /// One more, stopping at `Int.max`.
    static func counting(_ count: Int) -> Int {
        let (sum, overflow) = count.addingReportingOverflow(1)
        return overflow ? Int.max : sum
    }

    /// The version after `version`, wrapping from `Int64.max` to `Int64.min`. For versions that
    /// are only compared for equality (an account's session version, in every ID token as `sv`):
    /// it must change at every step, so it wraps rather than saturates — a version stuck at the
    /// top would leave the tokens issued under it valid after a revocation. Coming back to a
    /// value takes 2^64 steps.
    static func nextVersion(after version: Int64) -> Int64 { version &+ 1 }
}
