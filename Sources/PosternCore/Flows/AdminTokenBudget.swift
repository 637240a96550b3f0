/// The admin token's guess budget per client IP: `--admin-token-guesses` wrong tokens (default
/// ``defaultWrongTokens``) in a burst, then one more every `windowSeconds / guesses` (6 minutes at
/// the default). While an address is over it, every admin
/// request from it is answered 429 with `Retry-After`, the right token included, and guesses into
/// the refusal are not counted. The right token costs nothing and gives back nothing, so it
/// neither locks the operator out nor lets an attacker reset their count from another address.
///
/// Counted as `--ip-per-minute` is (``ClientLimit``, under its own bucket label): in the store on
/// PostgreSQL, so every daemon on the database holds an address to one budget; in the process on
/// SQLite. Always on, whatever the other limits: a 32-character token is out of reach at 240
/// guesses a day per address, where unlimited it was answered as fast as it was asked.
public enum AdminTokenBudget {
    /// Wrong tokens per address before the refusals begin, unless `--admin-token-guesses` says.
    public static let defaultWrongTokens: Int64 = 10
    /// The window the burst refills over, in seconds.
    public static let windowSeconds: Int64 = 3_600
}
