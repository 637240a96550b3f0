import PosternCore
import Testing

@Suite("Liveness policy")
struct LivenessPolicyTests {
    let policy = LivenessPolicy(interval: 2, missedBeats: 3)

    func beat(_ owner: String = "other", host: String = "box", pid: Int32 = 42, startedAt: Int64 = 1_000, at: Int64 = 1_000) -> DaemonHeartbeat {
        DaemonHeartbeat(owner: owner, host: host, pid: pid, startedAt: startedAt, beatAt: at)
    }

    @Test("a daemon is dead once its last beat is more than interval × missed beats old, not at that age")
    func silence() {
        #expect(policy.silenceAllowed == 6)
        #expect(!policy.isDead(beat(at: 1_000), now: 1_006, host: "box", localProcess: nil))
        #expect(policy.isDead(beat(at: 1_000), now: 1_007, host: "box", localProcess: nil))
        #expect(LivenessPolicy.standard.silenceAllowed == 6)
    }

    @Test("a beat from a clock ahead of ours is alive")
    func future() {
        #expect(!policy.isDead(beat(at: 2_000), now: 1_000, host: "box", localProcess: nil))
    }

    @Test("on this machine's store, a fresh beat whose pid is gone is dead at once")
    func pidGone() {
        let fresh = beat(at: 1_000)
        #expect(policy.isDead(fresh, now: 1_001, host: "box", localProcess: { _ in .gone }))
        #expect(!policy.isDead(fresh, now: 1_001, host: "box", localProcess: { _ in .running(startedAt: 990) }))
        #expect(!policy.isDead(fresh, now: 1_001, host: "box", localProcess: { _ in .running(startedAt: nil) }))
    }

    @Test("a pid now held by a process that started after the daemon's first beat was reused: dead")
    func pidReused() {
        let fresh = beat(startedAt: 1_000, at: 1_004)
        #expect(policy.isDead(fresh, now: 1_005, host: "box", localProcess: { _ in .running(startedAt: 1_002) }))
        // Start times read to the second: one second of slack.
        #expect(!policy.isDead(fresh, now: 1_005, host: "box", localProcess: { _ in .running(startedAt: 1_001) }))
    }

    @Test("pids of other hosts, and every pid on a store other machines share, are never probed")
    func otherHosts() {
        var probed: [Int32] = []
        let probe: (Int32) -> LocalProcess = { pid in
            probed.append(pid)
            return .gone
        }
        #expect(!policy.isDead(beat(host: "elsewhere", at: 1_000), now: 1_001, host: "box", localProcess: probe))
        #expect(!policy.isDead(beat(at: 1_000), now: 1_001, host: "box", localProcess: nil))
        #expect(probed.isEmpty)
    }

    @Test("the dead among the beats leave out the judge itself, even when silent or probed gone")
    func deadAmong() {
        let beats = [beat("me", at: 900), beat("silent", at: 900), beat("alive", at: 1_000), beat("gone", pid: 7, at: 1_000)]
        let dead = policy.dead(
            among: beats, me: "me", now: 1_001, host: "box", localProcess: { $0 == 7 ? .gone : .running(startedAt: 500) })
        #expect(dead.map(\.owner) == ["silent", "gone"])
    }

    @Test("a daemon owns its workers' leases (owner:N) and its own, not a longer owner's that shares the prefix")
    func owns() {
        let daemon = beat("box:42:5")
        #expect(daemon.ownsLease("box:42:5"))
        #expect(daemon.ownsLease("box:42:5:0") && daemon.ownsLease("box:42:5:13"))
        #expect(!daemon.ownsLease("box:42:55:0"))
        #expect(!daemon.ownsLease("box:42"))
        #expect(daemon.beating(at: 1_234) == DaemonHeartbeat(owner: "box:42:5", host: "box", pid: 42, startedAt: 1_000, beatAt: 1_234))
    }
}
