import Foundation
import PosternCore
import Synchronization
import Testing

@Suite("The per-client-IP limit, on each store")
struct ClientLimitStoreTests {
    @Test("one upsert per check: a burst of the limit, the wait, the refill, buckets apart", arguments: StoreKind.available)
    func sequence(kind: StoreKind) throws {
        let store = try kind.database().open()
        let bucket = Array("client-a".utf8)
        func take(_ at: Int64, _ b: [UInt8] = bucket) throws -> Int64? {
            try store.writeSyncingLater { try $0.takeClientToken(bucket: b, nowMillis: at, perMinute: 3) }
        }
        #expect(try take(1_000) == nil && take(1_000) == nil && take(1_000) == nil)
        #expect(try take(1_000) == 20)
        #expect(try take(20_999) == 1, "a refusal moves nothing: the wait only shrinks")
        #expect(try take(1_000, Array("client-b".utf8)) == nil)
        #expect(try take(21_000) == nil)
        #expect(try take(21_000) == 20)
        // Full again after a quiet minute: the burst again.
        #expect(try take(200_000) == nil && take(200_000) == nil && take(200_000) == nil && take(200_000) != nil)
        #expect(try store.writeSyncingLater { try $0.pruneClientBuckets(fullBy: 81_000, limit: 10) } == 1, "client-b is full again")
        #expect(try store.writeSyncingLater { try $0.pruneClientBuckets(fullBy: 10_000_000, limit: 10) } == 1)
        #expect(try take(10_000_000) == nil)
    }

    @Test("a longer window (the admin token's budget: 10 an hour), and the row read without counting", arguments: StoreKind.available)
    func hourWindow(kind: StoreKind) throws {
        let store = try kind.database().open()
        let bucket = Array("admin-a".utf8)
        func take(_ at: Int64) throws -> Int64? {
            try store.writeSyncingLater { try $0.takeClientToken(bucket: bucket, nowMillis: at, allowed: 10, windowMillis: 3_600_000) }
        }
        #expect(try store.read { try $0.clientTokenTAT(bucket: bucket) } == nil)
        for _ in 0..<10 { #expect(try take(1_000) == nil) }
        #expect(try take(1_000) == 360, "one more each 6 minutes")
        #expect(try store.read { try $0.clientTokenTAT(bucket: bucket) } == 3_601_000)
        #expect(try take(360_999) == 1)
        #expect(try take(361_000) == nil)
        #expect(try take(361_000) == 360)
    }

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
