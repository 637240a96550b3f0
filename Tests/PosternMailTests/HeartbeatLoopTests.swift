import Foundation
import PosternCore
import PosternTestSupport
import Synchronization
import Testing
@testable import PosternMail

/// The daemons' heartbeats as the outbox pool and the webhook worker run them: the row while
/// running, its removal at a stop, and a dead daemon's claims delivered long before their lease
/// ends. (The decisions are the ``LivenessPolicy``'s, tested in Core; the store operations run
/// against both stores in the store suite.)
@Suite("Heartbeats of the pool and the webhook worker")
struct HeartbeatLoopTests {
    /// A transport that accepts everything and counts it (its own counter: the pool suite's
    /// scripted transport keeps static state that suite resets).
    final class AcceptingTransport: MailTransport {
        let sends: Counter
        init(_ sends: Counter) { self.sends = sends }
        func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
            sends.increment()
            return .sent(reply: "250 ok")
        }
        func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
            guard gate() else { return .transient(reply: "abandoned", connectionFailed: false) }
            return deliver(mail)
        }
        func close() {}
    }

    /// A thread-safe count.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    let store = InMemoryStore()
    let clock = ManualClock()
    let sends = Counter()

    func pool(monotonic: any MonotonicClock = SystemMonotonicClock(), reclaims: ReclaimMetrics = ReclaimMetrics()) -> OutboxWorkerPool {
        OutboxWorkerPool(
            store: store, transport: { [sends] in AcceptingTransport(sends) },
            compose: OutboxWorkerPool.composingEach { message in
                OutgoingMail(
                    storedMessageID: "<\(message.id)@test>",
                    envelope: MailEnvelope(sender: "s@example.com", recipients: [message.recipient.address]),
                    bytes: Array("Subject: \(message.id)\r\n\r\nhello\r\n".utf8))
            },
            clock: clock, random: { 0 },
            configuration: .init(workers: 2, policy: DeliveryPolicy(lease: 150), batchSize: 8, pollInterval: 0.02, wakeJitter: 0),
            monotonic: monotonic, reclaims: reclaims)
    }

    /// Queues `count` messages and claims them all for the dead daemon `owner`'s worker 0, leased
    /// for the standard 150 s; returns their ids.
    func claimedByDead(_ owner: String, count: Int) throws -> [Int64] {
        let now = clock.unixSeconds()
        return try store.write { tx in
            for index in 0..<count {
                _ = try tx.enqueue(
                    .passwordChanged(uid: "u\(index)"), recipient: try EmailAddress.parse("r\(index)@example.com"), now: now,
                    giveUpAt: now + 3_600)
            }
            return try tx.claimDue(.mail, owner: owner + ":0", now: now, leaseUntil: now + 150, limit: count).map(\.message.id)
        }
    }

    func sentCount() throws -> Int {
        try store.read { try $0.outboxCounts() }[.sent]
    }

    @Test("a pool starting after a kill -9 on this machine delivers the dead process's claims at once, with the wall clock standing still")
    func restartTakesBack() throws {
        let now = clock.unixSeconds()
        // A pid above the kernel's pid_max: no process has it.
        let dead = DaemonHeartbeat(owner: "box:\(Int32.max):1", host: ProcessInfo.processInfo.hostName, pid: Int32.max, startedAt: now - 60, beatAt: now)
        try store.write { try $0.beat(dead) }
        let ids = try claimedByDead(dead.owner, count: 5)
        #expect(ids.count == 5)
        let reclaims = ReclaimMetrics()
        let workers = pool(reclaims: reclaims)
        workers.start()
        // The first beat ran in start(): the dead row is gone, this pool's is there.
        #expect(try store.read { try $0.daemonHeartbeats() }.map(\.owner) == [workers.heartbeat.keeper.identity.owner])
        #expect(try eventually { try sentCount() == 5 }, "5 sent")
        #expect(reclaims.snapshot() == ReclaimedClaims(messages: 5, webhooks: 0, owners: 1))
        #expect(workers.stop(timeout: 10))
        #expect(try store.read { try $0.daemonHeartbeats() }.isEmpty)
        #expect(sends.value == 5)
    }

    @Test("a running pool takes back another machine's claims on the first beat after that daemon's allowed silence")
    func silentElsewhere() throws {
        let monotonic = ManualMonotonicClock()
        let workers = pool(monotonic: monotonic)
        workers.start()
        let now = clock.unixSeconds()
        try store.write { try $0.beat(DaemonHeartbeat(owner: "far:1:1", host: "far-away", pid: 1, startedAt: now, beatAt: now)) }
        _ = try claimedByDead("far:1:1", count: 3)
        // Two beats within the silence allowed (6 s): nothing is taken back.
        for _ in 0..<2 {
            clock.advance(by: 2)
            monotonic.advance(by: .seconds(2))
            #expect(monotonic.waitUntilSettled(waiters: 1))
        }
        clock.advance(by: 2)
        #expect(try sentCount() == 0)
        #expect(try store.read { try $0.daemonHeartbeats() }.count == 2)
        // 7 s of silence at the next beat (the clock went on by one more second meanwhile).
        clock.advance(by: 1)
        monotonic.advance(by: .seconds(2))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(try eventually { try sentCount() == 3 }, "3 sent")
        #expect(try store.read { try $0.daemonHeartbeats() }.map(\.owner) == [workers.heartbeat.keeper.identity.owner])
        #expect(workers.stop(timeout: 10))
    }

    @Test("the webhook worker keeps its own heartbeat while it runs and removes it when it stops")
    func webhookWorker() throws {
        let worker = try WebhookWorkerTests.worker(store, clock: clock)
        worker.start()
        let owners = try store.read { try $0.daemonHeartbeats() }.map(\.owner)
        #expect(owners.count == 1 && owners.first?.hasPrefix("webhooks-") == true)
        worker.stop()
        #expect(try store.read { try $0.daemonHeartbeats() }.isEmpty)
    }

    @Test("the probe finds this process running since before now, and a pid no process has gone")
    func probe() throws {
        let pid = ProcessInfo.processInfo.processIdentifier
        guard case .running(let startedAt?) = LocalProcessProbe.probe(pid) else {
            Issue.record("this process's start time was not read")
            return
        }
        #expect(startedAt <= Int64(Date().timeIntervalSince1970))
        #expect(LocalProcessProbe.probe(Int32.max) == .gone)
        #expect(LocalProcessProbe.probe(0) == .gone)
    }

    @Test("the start time is field 22 of /proc/PID/stat, counted after the command name, which may hold ') ('")
    func startTicks() {
        let fields = (3...30).map { $0 == 22 ? "777" : "\($0)" }.joined(separator: " ")
        #expect(LocalProcessProbe.startTicks(stat: "123 (we) (ird name) \(fields)") == 777)
        #expect(LocalProcessProbe.startTicks(stat: "123 (short) S 1 2") == nil)
        #expect(LocalProcessProbe.startTicks(stat: "garbage") == nil)
    }
}
