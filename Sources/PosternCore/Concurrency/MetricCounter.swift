import Synchronization

/// One lock-free counter of a metric, in an array of one per label: a locked dictionary keyed by
/// an interpolated string was a point of contention on 64 request threads.
final class MetricCounter: Sendable {
    /// The count (relaxed: a metric needs no ordering with anything else).
    let value = Atomic<Int>(0)

    /// Adds one.
    func increment() { value.add(1, ordering: .relaxed) }

    /// The count now.
    var count: Int { value.load(ordering: .relaxed) }
}
