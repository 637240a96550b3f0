import Foundation
import PosternCrypto

/// A number's guessing budget (``GuessBudget``, the address's shape): one per number for every
/// code sent to it — phone sign-in codes and claim codes, typed by the owner or the holder. While
/// it is locked every code is refused unchecked, the right one included, and nothing is counted.
struct PhoneGuessBudget: Sendable {
    /// The persisters the budget uses: its helpers take these, in the caller's transaction.
    typealias Writes = any LimitWriter
    /// What its reads use.
    typealias Reads = any LimitReader

    let context: FlowContext

    /// The budget's bucket: a keyed hash of the number's keyed hash, so neither the number nor the
    /// hash the claims carry is stored with it, under the phone key, which never rotates.
    static func bucket(numberHash: [UInt8], ring: KeyRing) -> [UInt8] {
        Array(ring.phoneNumbers.authenticate(Array("postern-phone-guess-budget|".utf8) + numberHash).prefix(16))
    }

    /// The budget as it stands in `tx`: the seconds its lock has to run, or nil when a code may be
    /// checked now.
    func lock(bucket: [UInt8], tx: Reads, now: Int64) throws -> Int64? {
        context.config.guessBudget.retryAfter(try tx.guessRecord(bucket: bucket), now: now)
    }

    /// One wrong code against the budget, in the caller's write (only while unlocked: guesses into
    /// a lock are refused before they are checked, and not counted).
    func countWrongGuess(bucket: [UInt8], tx: Writes, now: Int64) throws {
        try tx.setGuessRecord(bucket: bucket, context.config.guessBudget.failing(try tx.guessRecord(bucket: bucket), now: now))
    }

    /// The answer while the budget is locked, counted as refused.
    func locked(_ wait: Int64) -> AuthError {
        context.metrics.refused("phone-locked")
        return .tooManyAttempts(retryAfter: wait)
    }
}
