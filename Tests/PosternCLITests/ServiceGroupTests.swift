import Foundation
import PosternAssembly
import Synchronization
import Testing

/// `postern serve`'s lifecycle as a group of parts: started in order, stopped in reverse, each
/// once, also when a later part fails to start.
@Suite("the service group")
struct ServiceGroupTests {
    struct StartFailed: Error {}

    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    func add(_ name: String, to group: ServiceGroup, _ journal: Journal) {
        group.start(name, { journal.note("start \(name)") }, stop: { journal.note("stop \(name)") })
    }

    @Test("parts start in order and stop in reverse; a second stop stops nothing again")
    func orderAndOnce() {
        let journal = Journal()
        let group = ServiceGroup()
        for name in ["workers", "housekeeping", "listener"] { add(name, to: group, journal) }
        #expect(group.running == ["workers", "housekeeping", "listener"])
        group.stop()
        group.stop()
        #expect(journal.all == [
            "start workers", "start housekeeping", "start listener", "stop listener", "stop housekeeping", "stop workers",
        ])
        #expect(group.running.isEmpty)
    }

    @Test("a part that fails to start stops the ones before it, in reverse, and is itself never stopped")
    func failedStart() {
        let journal = Journal()
        let group = ServiceGroup()
        add("workers", to: group, journal)
        add("housekeeping", to: group, journal)
        #expect(throws: StartFailed.self) {
            try group.start("listener", { () throws(StartFailed) in throw StartFailed() }, stop: { journal.note("stop listener") })
        }
        // The caller's own stop after the failure (as at any exit) stops nothing twice.
        group.stop()
        #expect(journal.all == ["start workers", "start housekeeping", "stop housekeeping", "stop workers"])
    }
}
