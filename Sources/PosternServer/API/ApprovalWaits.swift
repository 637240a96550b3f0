import Foundation
import PosternCore
import Synchronization

/// The long polls of `POST /v1/email-link/wait`: each holds one request thread while it waits,
/// so at most `capacity` wait at once; the others answer at once (the client calls again). They
/// look at the store every `pause` seconds, which also reaches an approval given through another
/// daemon on the same database.
final class ApprovalWaits: Sendable {
    /// The longest one call waits, in seconds.
    static let longest = 25
    /// How many calls may wait at once: a quarter of the 64 request threads of `postern serve`.
    let capacity: Int
    /// How often a waiting call looks again.
    let pause: TimeInterval
    private let waiting = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)

    init(capacity: Int = 16, pause: TimeInterval = 0.25) {
        self.capacity = capacity
        self.pause = pause
    }

    /// Calls `check` until it gives an answer or `seconds` pass; nil when none came.
    /// - Throws: what `check` throws.
    func wait<T>(seconds: Int, _ check: () throws(AuthError) -> T?) throws(AuthError) -> T? {
        if let answer = try check() { return answer }
        guard seconds > 0, !stopping.load(ordering: .relaxed) else { return nil }
        guard waiting.add(1, ordering: .relaxed).newValue <= capacity else {
            waiting.subtract(1, ordering: .relaxed)
            return nil
        }
        defer { waiting.subtract(1, ordering: .relaxed) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(seconds))
        while clock.now < deadline, !stopping.load(ordering: .relaxed) {
            Thread.sleep(forTimeInterval: pause)
            if let answer = try check() { return answer }
        }
        return nil
    }

    /// How many calls wait now.
    var inFlight: Int { waiting.load(ordering: .relaxed) }

    /// Ends every wait at its next look, and makes new calls answer at once.
    func stop() { stopping.store(true, ordering: .relaxed) }
}
