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

@Suite("thread names reach the operating system")
struct NamedThreadTests {
    /// The calling thread's name as `top -H`, `ps -L` and perf show it.
    static func osName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? "unreadable"
    }

    /// Runs `start` and returns what `read` gave on the thread it started.
    static func seen<Value: Sendable>(_ read: @escaping @Sendable () -> Value, _ start: (@escaping @Sendable () -> Void) -> Void) -> Value? {
        let seen = Mutex<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        start {
            seen.withLock { $0 = read() }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        return seen.withLock { $0 }
    }

    /// Runs `start` and returns the OS name its thread had, read on that thread.
    static func nameSeen(_ start: (@escaping @Sendable () -> Void) -> Void) -> String {
        seen(osName, start) ?? "never ran"
    }

    @Test("a thread started by name shows it; a name past Linux's 15 bytes is cut, not refused")
    func names() {
        #expect(Self.nameSeen { body in Thread.start(named: "store-writer", body) } == "store-writer")
        #expect(Self.nameSeen { body in Thread.start(named: "a-name-far-past-fifteen", body) } == "a-name-far-past")
        // Foundation's own name, set before start(), is what left every thread called `postern`.
        let plain = Self.nameSeen { body in
            let thread = Thread(block: body)
            thread.name = "plain-foundation"
            thread.start()
        }
        #expect(plain != "plain-foundation")
    }

    /// The scheduling policy Linux has for the thread that runs `start`'s body, read on it.
    static func policySeen(_ start: (@escaping @Sendable () -> Void) -> Void) -> Int32? {
        seen({ sched_getscheduler(0) }, start)
    }

    /// The nice value of the thread that runs `start`'s body, read on it.
    static func niceSeen(_ start: (@escaping @Sendable () -> Void) -> Void) -> Int32? {
        seen({ getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }, start)
    }

    @Test("a thread started for batch work runs under SCHED_BATCH (3) at nice 10; others keep SCHED_OTHER (0) and their nice value")
    func batchScheduling() {
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #expect(Self.policySeen { body in Thread.start(named: "outbox-0", scheduling: .batch, body) } == 3)
        #expect(Self.niceSeen { body in Thread.start(named: "outbox-0", scheduling: .batch, body) } == max(own, ThreadScheduling.batchNice))
        #expect(Self.policySeen { body in Thread.start(named: "store-writer", body) } == SCHED_OTHER)
        #expect(Self.niceSeen { body in Thread.start(named: "store-writer", body) } == own)
        // Policy and nice value are the thread's own: the test's thread is untouched.
        #expect(sched_getscheduler(0) == SCHED_OTHER)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == own)
    }

    @Test("a background thread carries its name")
    func backgroundThread() {
        let thread = BackgroundThread(name: "housekeeping")
        let seen = Self.nameSeen { body in thread.start { _ in body() } }
        thread.stop()
        #expect(seen == "housekeeping")
    }
}
