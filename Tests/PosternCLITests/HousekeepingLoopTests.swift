import Foundation
import PosternAssembly
import PosternCore
import PosternTestSupport
import Synchronization
import Testing

/// The daemon's housekeeping thread, on a manual monotonic clock: rounds come one interval
/// apart, and stop ends the thread.
@Suite("Housekeeping loop")
struct HousekeepingLoopTests {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("a round runs each interval, logs what it removed (counts only), and stop ends the thread")
    func rounds() throws {
        let store = InMemoryStore()
        let secretNonce = Array("nonce-that-must-not-be-logged".utf8)
        try store.write { tx in _ = try tx.consume(nonce: secretNonce, expiresAt: 100) }
        let monotonic = ManualMonotonicClock()
        let lines = Lines()
        let housekeeper = Housekeeper(store: store, policy: RetentionPolicy(), clock: ManualClock(Date(timeIntervalSince1970: 1000)))
        let loop = HousekeepingLoop(
            housekeeper: housekeeper, interval: .seconds(60), clock: monotonic,
            logger: Logger(label: "housekeeping", sink: { lines.append($0) }))
        loop.start()
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(loop.roundsRun == 0 && store.snapshot().consumed.count == 1, "nothing before the first interval")
        monotonic.advance(by: .seconds(59))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(loop.roundsRun == 0)
        monotonic.advance(by: .seconds(1))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(loop.roundsRun == 1 && store.snapshot().consumed.isEmpty)
        #expect(housekeeper.metrics.snapshot().first { $0.rows == .consumedCodes }?.count == 1)
        monotonic.advance(by: .seconds(60))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(loop.roundsRun == 2)
        loop.stop()
        let logged = lines.all
        #expect(logged.count == 1, "one line for the round that removed something, none for the empty one: \(logged)")
        #expect(logged.first?.contains(#""consumed_codes":"1""#) == true)
        #expect(!logged.joined().contains("nonce-that-must-not-be-logged"))
        monotonic.advance(by: .seconds(600))
        #expect(loop.roundsRun == 2, "no round after stop")
    }

    @Test("stop before start, and twice, returns at once")
    func stopIdle() {
        let loop = HousekeepingLoop(
            housekeeper: Housekeeper(store: InMemoryStore(), policy: RetentionPolicy(), clock: ManualClock()),
            clock: ManualMonotonicClock(), logger: Logger(label: "housekeeping", sink: { _ in }))
        loop.stop()
        loop.start()
        loop.stop()
        loop.stop()
        #expect(loop.roundsRun == 0)
    }
}
