import Foundation
import PosternCore
import PosternTestSupport
import Synchronization
import Testing
@testable import PosternServer

@Suite("the approval long polls and the device names")
struct ApprovalWaitsTests {
    @Test("a wait answers as soon as its check does, and gives up after its seconds")
    func answersOrGivesUp() throws {
        let waits = ApprovalWaits(capacity: 4, pause: 0.01)
        let calls = Atomic<Int>(0)
        let answer = try waits.wait(seconds: 5) { () throws(AuthError) -> Int? in
            calls.add(1, ordering: .relaxed).newValue >= 3 ? 42 : nil
        }
        #expect(answer == 42 && calls.load(ordering: .relaxed) == 3)
        let started = ContinuousClock.now
        #expect(try waits.wait(seconds: 1) { () throws(AuthError) -> Int? in nil } == nil)
        #expect(ContinuousClock.now - started >= .seconds(1))
        // waitSeconds 0: one look, no wait.
        #expect(try waits.wait(seconds: 0) { () throws(AuthError) -> Int? in nil } == nil)
    }

    @Test("past the capacity a call answers at once instead of holding a request thread")
    func capacity() async throws {
        let waits = ApprovalWaits(capacity: 2, pause: 0.01)
        let release = Atomic<Bool>(false)
        let holders = (0..<2).map { _ in
            onThread {
                try? waits.wait(seconds: 10) { () throws(AuthError) -> Int? in release.load(ordering: .relaxed) ? 1 : nil }
            }
        }
        // Both holders are waiting (on a loaded machine their threads may take a while to start).
        #expect(await onThread { eventually { waits.inFlight == 2 } }.value)
        let started = ContinuousClock.now
        #expect(try waits.wait(seconds: 10) { () throws(AuthError) -> Int? in nil } == nil)
        #expect(ContinuousClock.now - started < .seconds(1), "the third waited")
        release.store(true, ordering: .relaxed)
        for holder in holders { #expect(await holder.value == 1) }
    }

    @Test("stop ends the waits at their next look")
    func stop() throws {
        let waits = ApprovalWaits(capacity: 2, pause: 0.01)
        let started = ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { waits.stop() }
        #expect(try waits.wait(seconds: 20) { () throws(AuthError) -> Int? in nil } == nil)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("device names from User-Agents", arguments: [
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on Linux"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari on iPhone"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.6; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on macOS"),
        ("MyApp/3 CFNetwork/1568.100.1 Darwin/24.0.0", "an app on macOS"),
        ("curl/8.5.0", "another device"),
        ("", "another device"),
    ])
    func deviceNames(agent: String, name: String) {
        #expect(DeviceName(userAgent: agent).text == name)
    }
}

/// Runs `body` on a thread of its own (a wait blocks its thread; the test's tasks must not be
/// starved of the cooperative pool's few); the task's value is its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> Task<T, Never> {
    Task { await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume(returning: body()) } } }
}
