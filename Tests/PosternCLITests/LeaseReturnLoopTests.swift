import Foundation
import PosternAssembly
import PosternCore
import PosternTestSupport
import Synchronization
import Testing

/// The daemon's return of unspent slices, on a manual monotonic clock: those past their lease
/// every lease length, all of them at stop, a failure logged without stopping the loop, and no
/// thread where nothing holds slices.
@Suite("Lease return loop")
struct LeaseReturnLoopTests {
    final class Holder: LeaseHolder {
        let holdsLeases: Bool
        let leaseMillis: Int64
        private let calls = Mutex<[Bool]>([])
        private let failing = Mutex(false)
        init(holds: Bool = true, leaseMillis: Int64 = 1_000) {
            holdsLeases = holds
            self.leaseMillis = leaseMillis
        }
        var returns: [Bool] { calls.withLock { $0 } }
        func fail(_ on: Bool) { failing.withLock { $0 = on } }
        func returnUnused(all: Bool) throws(AuthError) -> Int64 {
            calls.withLock { $0.append(all) }
            if failing.withLock({ $0 }) { throw AuthError.unavailable("the database is away") }
            return 1
        }
    }

    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("every lease length the expired slices go back, a failure is logged and the loop goes on, and stop gives back all")
    func returns() {
        let monotonic = ManualMonotonicClock()
        let (holder, idle, lines) = (Holder(), Holder(holds: false), Lines())
        let loop = LeaseReturnLoop(limits: [holder, idle], clock: monotonic, logger: Logger(label: "limits", sink: { lines.append($0) }))
        loop.start()
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(holder.returns.isEmpty, "nothing before the first second")
        monotonic.advance(by: .milliseconds(1_000))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(holder.returns == [false])
        holder.fail(true)
        monotonic.advance(by: .milliseconds(1_000))
        #expect(monotonic.waitUntilSettled(waiters: 1))
        #expect(holder.returns == [false, false])
        #expect(lines.all.count == 1 && lines.all.first?.contains("could not give back") == true)
        holder.fail(false)
        loop.stop()
        #expect(holder.returns == [false, false, true], "all of them at stop")
        #expect(idle.returns.isEmpty, "a limit without slices is never asked")
    }

    @Test("nothing holds slices (SQLite, or the limits off): no thread, and stop returns at once")
    func noThread() {
        let idle = Holder(holds: false)
        let loop = LeaseReturnLoop(limits: [idle], clock: ManualMonotonicClock(), logger: Logger(label: "limits", sink: { _ in }))
        loop.start()
        loop.stop()
        #expect(idle.returns.isEmpty)
    }
}
