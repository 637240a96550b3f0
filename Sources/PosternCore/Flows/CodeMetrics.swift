import Synchronization

/// Counts of codes minted, consumed and refused (by reason), for `/metrics`. Values only: no codes.
public final class CodeMetrics: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Creates empty counters.
    public init() {}

    func minted(_ action: EmailAction) { add("minted|\(action.rawValue)") }
    func consumed(_ action: EmailAction) { add("consumed|\(action.rawValue)") }
    func refused(_ reason: String) { add("refused|\(reason)") }

    private func add(_ key: String) { counts.withLock { $0[key, default: 0] += 1 } }

    /// Every counter: (event, label, count), where event is minted/consumed/refused and label the
    /// action or the reason.
    public func snapshot() -> [(event: String, label: String, count: Int)] {
        counts.withLock { $0 }.sorted { $0.key < $1.key }.compactMap { key, value in
            let parts = key.split(separator: "|", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), String(parts[1]), value)
        }
    }
}
