import Foundation
import PosternCore
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
}
