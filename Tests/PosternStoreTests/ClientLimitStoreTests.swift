import Foundation
import PosternCore
import PosternStore
import PosternTestSupport
import Synchronization
import Testing

@Suite("The per-client-IP limit, on each store")
struct ClientLimitStoreTests {
    @Test("two daemons' stores, 8 threads checking one client at the same moment: exactly the limit is allowed, none fails",
          arguments: StoreKind.available)
    func concurrentDaemons(kind: StoreKind) throws {
        let database = try kind.database()
        let stores = [try database.open(), try database.open()]
        let allowed = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let bucket = Array("client-hot".utf8)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            let store = stores[thread % 2]
            for _ in 0..<25 {
                do {
                    let wait = try store.writeSyncingLater { try $0.takeClientToken(bucket: bucket, nowMillis: 5_000, perMinute: 50) }
                    if wait == nil { allowed.add(1, ordering: .relaxed) } else { refused.add(1, ordering: .relaxed) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(allowed.load(ordering: .relaxed) == 50)
        #expect(refused.load(ordering: .relaxed) == 150)
    }

    @Test("three daemons' flows on one database, 24 threads on one busy client at one moment: the leases spend what the store counted, and after they go back it counts exactly what was admitted",
          arguments: StoreKind.available)
    func leasesAcrossDaemons(kind: StoreKind) throws {
        let database = try kind.database()
        let box = try MasterKeyFile.loadOrCreate(at: database.keyFile)
        // 60,000 a minute: a step of 1 ms, slices up to 1,875.
        let perMinute: Int64 = 60_000
        let daemons = try (0..<3).map { _ in
            try FlowHarness(try database.open(), box: box) { $0.ipPerMinute = perMinute }
        }
        let shared = kind == .postgres
        #expect(daemons.allSatisfy { $0.service.clientLimit.holdsLeases == shared })
        let admitted = Atomic<Int64>(0)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { thread in
            for _ in 0..<200 {
                do throws(AuthError) {
                    try daemons[thread % 3].service.clientLimit.admit(ip: "203.0.113.50")
                    admitted.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(admitted.load(ordering: .relaxed) == 4_800)
        guard shared else { return }
        let given = try daemons.map { try $0.service.clientLimit.returnUnused(all: true) }.reduce(0, +)
        #expect(given <= 3 * ClientLimit.maxSlice(allowed: perMinute), "at most a slice held per daemon: \(given)")
        // A fourth daemon, at the same moment, finds exactly the rest of the burst: the store counted the 4,800 admitted, no more.
        let fourth = try FlowHarness(try database.open(), box: box) { $0.ipPerMinute = perMinute }
        var rest = 0
        while (try? fourth.service.clientLimit.admit(ip: "203.0.113.50")) != nil { rest += 1 }
        #expect(rest == 60_000 - 4_800)
    }
}
