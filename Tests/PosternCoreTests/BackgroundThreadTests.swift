import Foundation
import PosternCore
import PosternTestSupport
import Synchronization
import Testing

@Suite("the daemon's background threads")
struct BackgroundThreadTests {
    @Test("waits are on the injected clock; stop ends a wait at once and returns after the body")
    func lifecycle() throws {
        let clock = ManualMonotonicClock()
        let thread = BackgroundThread(name: "test", clock: clock)
        let rounds = Atomic<Int>(0)
        let ended = Atomic<Bool>(false)
        thread.start { thread in
            while thread.wait(for: .seconds(60)) { rounds.add(1, ordering: .relaxed) }
            ended.store(true, ordering: .relaxed)
        }
        thread.start { _ in Issue.record("a second start ran a body") }
        #expect(clock.waitUntilSettled(waiters: 1))
        let before = rounds.load(ordering: .relaxed)
        #expect(before == 0, "no round before an interval")
        clock.advance(by: .seconds(59))
        #expect(clock.waitUntilSettled(waiters: 1))
        let early = rounds.load(ordering: .relaxed)
        #expect(early == 0, "59 s is not an interval")
        clock.advance(by: .seconds(1))
        for expected in 1...3 {
            #expect(clock.waitUntilSettled(waiters: 1))
            let seen = rounds.load(ordering: .relaxed)
            #expect(seen == expected)
            clock.advance(by: .seconds(60))
        }
        #expect(!thread.isStopping)
        thread.stop()
        let bodyEnded = ended.load(ordering: .relaxed)
        #expect(bodyEnded, "stop returned before the body did")
        #expect(thread.isStopping && !thread.wait(for: .seconds(1)))
        thread.stop()
    }

    @Test("stop before start, and twice, does nothing")
    func stopUnstarted() {
        let thread = BackgroundThread(name: "idle")
        thread.stop()
        thread.stop()
        #expect(!thread.isStopping)
    }
}
