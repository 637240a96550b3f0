import Synchronization

/// Counts of code requests recorded, codes consumed and codes refused (by reason), for
/// `/metrics`. Values only: no codes.
///
/// Nothing here may move differently for an address with an account and one without: a request
/// is counted when it is recorded (the same for every address), never when the content stage
/// mints its code (which it does for a reset only when the account exists: a "minted" counter
/// told anyone who could read `/metrics` whether an address had an account).
public final class CodeMetrics: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Creates empty counters.
    public init() {}

    func requested(_ action: EmailAction) { add("requested|\(action.rawValue)") }
    func consumed(_ action: EmailAction) { add("consumed|\(action.rawValue)") }
    func refused(_ reason: String) { add("refused|\(reason)") }

    private func add(_ key: String) { counts.withLock { $0[key, default: 0] += 1 } }

    /// Every counter: (event, label, count), where event is requested/consumed/refused and label the
    /// action or the reason.
    public func snapshot() -> [(event: String, label: String, count: Int)] {
        counts.withLock { $0 }.sorted { $0.key < $1.key }.compactMap { key, value in
            let parts = key.split(separator: "|", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), String(parts[1]), value)
        }
    }
}
