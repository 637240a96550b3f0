/// What a daemon's probe of a process on its own machine found (`kill(pid, 0)` and the process's
/// start time): the facts the ``LivenessPolicy`` judges, gathered by the caller.
public enum LocalProcess: Sendable, Hashable {
    /// No process has that id (`ESRCH`).
    case gone
    /// A process has that id; `startedAt` (Unix seconds) when it could be read.
    case running(startedAt: Int64?)
}

/// Who is dead at `now`: the decision behind taking back a daemon's claims before their leases
/// run out, as a value with no I/O.
///
/// A daemon beats every `interval` seconds. Another daemon counts it dead when
/// - its last beat is more than `interval × missedBeats` seconds old (any store: the daemons'
///   clocks must agree to within a second or so, as the leases already assume); or,
/// - on a store only this machine opens (SQLite), at once when it ran on this host and its pid
///   is gone — or now belongs to a process that started after the daemon's first beat (the pid
///   was reused: the daemon's own process started before it wrote that beat).
///
/// A daemon never judges itself, nor a beat from its future (a clock ahead of its own).
public struct LivenessPolicy: Sendable, Hashable {
    /// Seconds between two beats (2).
    public var interval: Int64
    /// Beats missed in a row before a daemon counts as dead (3).
    public var missedBeats: Int64

    /// The policy; the defaults are the production values.
    public init(interval: Int64 = 2, missedBeats: Int64 = 3) {
        self.interval = max(1, interval)
        self.missedBeats = max(1, missedBeats)
    }

    /// The production policy.
    public static let standard = LivenessPolicy()

    /// How old a last beat may be, in seconds, before its daemon counts as dead.
    public var silenceAllowed: Int64 { interval * missedBeats }

    /// Whether `beat`'s daemon is dead at `now`. `localProcess` probes a pid on this machine; nil
    /// when the store is shared with other machines (then only the silence counts). `host`: this
    /// machine's name.
    public func isDead(
        _ beat: DaemonHeartbeat, now: Int64, host: String, localProcess: ((Int32) -> LocalProcess)?
    ) -> Bool {
        if now - beat.beatAt > silenceAllowed { return true }
        guard let localProcess, beat.host == host else { return false }
        switch localProcess(beat.pid) {
        case .gone:
            return true
        case .running(let startedAt?):
            // A process's start time reads to the second: one second of slack.
            return startedAt > beat.startedAt + 1
        case .running(nil):
            return false
        }
    }

    /// The heartbeats among `beats` whose daemons are dead at `now`, leaving out `me` (the
    /// judging daemon's owner).
    public func dead(
        among beats: [DaemonHeartbeat], me: String, now: Int64, host: String, localProcess: ((Int32) -> LocalProcess)?
    ) -> [DaemonHeartbeat] {
        beats.filter { $0.owner != me && isDead($0, now: now, host: host, localProcess: localProcess) }
    }
}
