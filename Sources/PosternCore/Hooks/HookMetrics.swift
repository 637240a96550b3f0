import Synchronization

/// What the hooks answered since the daemon started, for `/metrics`
/// (`postern_hook_calls_total{hook,outcome}`).
public final class HookMetrics: Sendable {
    /// The outcomes counted, as the `outcome` label names them.
    public enum Outcome: String, Sendable, CaseIterable {
        /// `{"decision":"allow"}`.
        case allow
        /// `{"decision":"deny"}`.
        case deny
        /// `{"claims":{…}}` (token_claims).
        case claims
        /// No usable answer: a timeout, no connection, a status not 2xx, an answer of the wrong shape.
        case failure
    }

    private let counts = Mutex([String: Int]())

    public init() {}

    func count(_ hook: HookKind, _ outcome: Outcome) { counts.withLock { $0["\(hook.rawValue) \(outcome.rawValue)", default: 0] += 1 } }

    /// Every hook's every outcome, in `HookKind.allCases` then `Outcome.allCases` order.
    public func snapshot() -> [(hook: HookKind, outcome: Outcome, count: Int)] {
        let current = counts.withLock { $0 }
        return HookKind.allCases.flatMap { hook in
            Outcome.allCases.map { (hook, $0, current["\(hook.rawValue) \($0.rawValue)"] ?? 0) }
        }
    }
}
