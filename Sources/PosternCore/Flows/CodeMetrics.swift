import Synchronization

/// Counts of code requests recorded, codes consumed and codes refused (by reason), for
/// `/metrics`. Values only: no codes.
///
/// Nothing here may move differently for an address with an account and one without: a request
/// is counted when it is recorded (the same for every address), never when the content stage
/// mints its code (which it does for a reset only when the account exists: a "minted" counter
/// told anyone who could read `/metrics` whether an address had an account).
public final class CodeMetrics: Sendable {
    private let requestedCounts: [MetricCounter] = EmailAction.allCases.map { _ in MetricCounter() }
    private let consumedCounts: [MetricCounter] = EmailAction.allCases.map { _ in MetricCounter() }
    /// Refusals are rare; their reasons are an open set.
    private let refusals = Mutex<[String: Int]>([:])
    /// Links refused, by the public reason (`ActionCodeError.metricLabel`).
    private let linkFailureCounts: [MetricCounter] = CodeMetrics.linkFailureReasons.map { _ in MetricCounter() }

    /// The labels of `postern_link_failures_total`, in the order `/metrics` lists them.
    public static let linkFailureReasons = ["expired", "invalid", "other_browser", "superseded", "used"]

    /// Creates empty counters.
    public init() {}

    private static func index(_ action: EmailAction) -> Int { EmailAction.allCases.firstIndex(of: action) ?? 0 }

    func requested(_ action: EmailAction) { requestedCounts[Self.index(action)].value.add(1, ordering: .relaxed) }
    func consumed(_ action: EmailAction) { consumedCounts[Self.index(action)].value.add(1, ordering: .relaxed) }
    func refused(_ reason: String) { refusals.withLock { $0[reason, default: 0] += 1 } }

    /// A link was refused for `error`: its internal reason and its public one are counted.
    func refused(_ error: ActionCodeError) {
        refused(error.reason.rawValue)
        if let index = Self.linkFailureReasons.firstIndex(of: error.metricLabel) {
            linkFailureCounts[index].value.add(1, ordering: .relaxed)
        }
    }

    /// `postern_link_failures_total`: every public reason with its count (0 included).
    public func linkFailures() -> [(reason: String, count: Int)] {
        zip(Self.linkFailureReasons, linkFailureCounts).map { ($0, $1.value.load(ordering: .relaxed)) }
    }

    /// Every counter that has counted: (event, label, count), where event is requested/consumed/
    /// refused and label the action or the reason; sorted by event, then label.
    public func snapshot() -> [(event: String, label: String, count: Int)] {
        var entries: [(event: String, label: String, count: Int)] = []
        for (event, counters) in [("consumed", consumedCounts), ("requested", requestedCounts)] {
            for (action, counter) in zip(EmailAction.allCases, counters) {
                let count = counter.value.load(ordering: .relaxed)
                if count > 0 { entries.append((event, action.rawValue, count)) }
            }
        }
        for (reason, count) in refusals.withLock({ $0 }) { entries.append(("refused", reason, count)) }
        return entries.sorted { ($0.event, $0.label) < ($1.event, $1.label) }
    }
}
