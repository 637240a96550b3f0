import Foundation
import PosternCore

/// A daemon's heartbeat thread: a ``HeartbeatKeeper`` beat every ``LivenessPolicy/interval`` on a
/// ``BackgroundThread``, a log line for each beat that took claims back (counts only), and the
/// row removed at a graceful stop. Each outbox pool and each webhook worker has one.
///
/// The first beat runs in ``start()`` itself, before the workers claim anything: the row exists
/// before the first claim, and a restarted daemon takes back the claims of the process it
/// replaces at once (on SQLite that process's pid is gone) rather than after the allowed silence.
public final class HeartbeatLoop: Sendable {
    /// The keeper it runs.
    public let keeper: HeartbeatKeeper
    private let interval: Duration
    private let clock: any WallClock
    private let logger: Logger?
    private let thread: BackgroundThread

    /// A loop (not started) for the daemon whose lease owner (or owners' prefix) is `owner`.
    /// Processes on this machine are probed when `store` is confined to it.
    public init(
        owner: String, store: any Store, policy: LivenessPolicy = .standard, clock: any WallClock,
        monotonic: any MonotonicClock = SystemMonotonicClock(), metrics: ReclaimMetrics = ReclaimMetrics(), logger: Logger?
    ) {
        let identity = DaemonHeartbeat(
            owner: owner, host: ProcessInfo.processInfo.hostName, pid: ProcessInfo.processInfo.processIdentifier,
            startedAt: clock.unixSeconds(), beatAt: clock.unixSeconds())
        let probe: (@Sendable (Int32) -> LocalProcess)? = store.isConfinedToThisMachine ? LocalProcessProbe.probe : nil
        keeper = HeartbeatKeeper(identity: identity, store: store, policy: policy, localProcess: probe, metrics: metrics)
        interval = .seconds(policy.interval)
        self.clock = clock
        self.logger = logger
        thread = BackgroundThread(name: "heartbeat", clock: monotonic)
    }

    /// Beats once now, then every interval on the thread. Does nothing when started already.
    public func start() {
        guard !thread.isStarted else { return }
        beat()
        thread.start { [self] thread in
            while thread.wait(for: interval) { beat() }
        }
    }

    /// Stops the thread and removes the heartbeat: call it after the workers gave their claims
    /// back. Does nothing when it never started.
    public func stop() {
        let started = thread.isStarted
        thread.stop()
        guard started else { return }
        do {
            try keeper.remove()
        } catch {
            logger?.warning("heartbeat not removed", ["owner": keeper.identity.owner, "error": "\(error)"])
        }
    }

    private func beat() {
        do {
            let reclaimed = try keeper.beat(now: clock.unixSeconds())
            if reclaimed.owners > 0 {
                logger?.info(
                    "took back the claims of stopped daemons",
                    ["daemons": String(reclaimed.owners), "messages": String(reclaimed.messages), "webhooks": String(reclaimed.webhooks), "sms": String(reclaimed.sms)])
            }
        } catch {
            logger?.warning("heartbeat failed", ["owner": keeper.identity.owner, "error": "\(error)"])
        }
    }
}
