import Foundation
import PosternCore

/// Gives back what the slices of counts shared in the store took and did not spend
/// (``LeaseHolder/returnUnused(all:)``: the per-IP limits, the mail caps, the challenge's
/// thresholds): every lease length while the daemon runs, and all of them when it stops, so a
/// client that moves to another daemon finds its budget there. Runs only where counts are shared
/// in the store (PostgreSQL); on SQLite it starts no thread.
public final class LeaseReturnLoop: Sendable {
    private let limits: [any LeaseHolder]
    private let logger: Logger
    private let thread: BackgroundThread

    /// A loop over `limits`, not started.
    public init(limits: [any LeaseHolder], clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger) {
        self.limits = limits.filter(\.holdsLeases)
        self.logger = logger
        thread = BackgroundThread(name: "client-leases", clock: clock)
    }

    /// Starts the thread when a limit holds leases.
    public func start() {
        guard let interval = limits.map(\.leaseMillis).min() else { return }
        thread.start { [self] thread in
            while thread.wait(for: .milliseconds(interval)) { returnUnused(all: false) }
            returnUnused(all: true)
        }
    }

    /// Gives back every lease and stops the thread.
    public func stop() { thread.stop() }

    private func returnUnused(all: Bool) {
        for limit in limits {
            do {
                try limit.returnUnused(all: all)
            } catch {
                // AuthError's description names the store failure, never a client or a bucket.
                logger.warning("could not give back the unspent slices of shared limits; they stay counted until their window or bucket refills",
                               ["error": "\(error)"])
            }
        }
    }
}
