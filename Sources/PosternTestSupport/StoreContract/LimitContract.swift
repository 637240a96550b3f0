import Foundation
import PosternCore
import PosternCrypto

/// Rate limits: events per bucket (an interval and an hour), fixed windows, the per-client
/// buckets, and the guess budgets; each pruned at its horizon.
enum LimitContract {
    static let cases: [StoreContractCase] = [
        StoreContractCase("limits", "one upsert per check: a burst of the limit, the wait, the refill, buckets apart") { store in
            let bucket = Array("client-a".utf8)
            func take(_ at: Int64, _ b: [UInt8] = bucket) throws -> Int64? {
                try store.writeSyncingLater { try $0.takeClientToken(bucket: b, nowMillis: at, perMinute: 3) }
            }
            try expectContract(try take(1_000) == nil && take(1_000) == nil && take(1_000) == nil)
            try expectContract(try take(1_000) == 20)
            try expectContract(try take(20_999) == 1, "a refusal moves nothing: the wait only shrinks")
            try expectContract(try take(1_000, Array("client-b".utf8)) == nil)
            try expectContract(try take(21_000) == nil)
            try expectContract(try take(21_000) == 20)
            // Full again after a quiet minute: the burst again.
            try expectContract(try take(200_000) == nil && take(200_000) == nil && take(200_000) == nil && take(200_000) != nil)
            try expectContract(try store.writeSyncingLater { try $0.pruneClientBuckets(fullBy: 81_000, limit: 10) } == 1, "client-b is full again")
            try expectContract(try store.writeSyncingLater { try $0.pruneClientBuckets(fullBy: 10_000_000, limit: 10) } == 1)
            try expectContract(try take(10_000_000) == nil)
        },
        StoreContractCase("limits", "a longer window (the admin token's budget: 10 an hour), and the row read without counting") { store in
            let bucket = Array("admin-a".utf8)
            func take(_ at: Int64) throws -> Int64? {
                try store.writeSyncingLater { try $0.takeClientToken(bucket: bucket, nowMillis: at, allowed: 10, windowMillis: 3_600_000) }
            }
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: bucket) } == nil)
            for _ in 0..<10 { try expectContract(try take(1_000) == nil) }
            try expectContract(try take(1_000) == 360, "one more each 6 minutes")
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: bucket) } == 3_601_000)
            try expectContract(try take(360_999) == 1)
            try expectContract(try take(361_000) == nil)
            try expectContract(try take(361_000) == 360)
        },
        StoreContractCase("limits", "a lease: a take of several grants as many as fit, a refused one moves nothing, unused ones go back") { store in
            let bucket = Array("client-lease".utf8)
            // 100 a minute: a step of 600 ms, at most 100 taken at one moment.
            func take(_ count: Int64, at: Int64) throws -> ClientTokenGrant {
                try store.writeSyncingLater {
                    try $0.takeClientTokens(bucket: bucket, now: at, allowed: 100, window: 60_000, upTo: count)
                }
            }
            func giveBack(_ count: Int64) throws {
                try store.writeSyncingLater { try $0.returnClientTokens(bucket: bucket, count: count, allowed: 100, window: 60_000) }
            }
            try giveBack(5)  // no row yet: nothing to give back, and no row made
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: bucket) } == nil)
            try expectContract(try take(40, at: 1_000) == ClientTokenGrant(granted: 40, tat: 25_000), "a new row takes the slice")
            try expectContract(try take(50, at: 1_000) == ClientTokenGrant(granted: 50, tat: 55_000))
            try expectContract(try take(50, at: 1_000) == ClientTokenGrant(granted: 10, tat: 61_000), "only what fits")
            try expectContract(try take(3, at: 1_000) == ClientTokenGrant(granted: 0, tat: 61_000), "none fit: the row kept")
            try giveBack(30)
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: bucket) } == 43_000, "30 steps back")
            try expectContract(try take(100, at: 1_000) == ClientTokenGrant(granted: 30, tat: 61_000), "the 30 are there again")
            // A clock behind the one that took (another daemon's): nothing fits, nothing breaks.
            try expectContract(try take(1, at: 0).granted == 0)
            // Given back past now: the bucket is full again, never fuller.
            try giveBack(1_000)
            try expectContract(try take(200, at: 2_000) == ClientTokenGrant(granted: 100, tat: 62_000))
        },
        StoreContractCase("limits", "a fixed window taken in slices: as many as fit under the limit, given back within the window only") { store in
            let bucket = Array("window-slices".utf8)
            func take(_ count: Int64, at: Int64) throws -> Int64 {
                try store.writeSyncingLater { try $0.takeInWindow(bucket: bucket, now: at, window: 3_600, limit: 8, upTo: count) }
            }
            func giveBack(_ count: Int64, windowStart: Int64) throws {
                try store.writeSyncingLater { try $0.returnInWindow(bucket: bucket, windowStart: windowStart, count: count) }
            }
            try giveBack(3, windowStart: 0)  // no row: nothing
            try expectContract(try take(5, at: 7_300) == 5, "a new row")
            try expectContract(try take(5, at: 7_301) == 3, "what is left")
            try expectContract(try take(1, at: 7_302) == 0, "full")
            try expectContract(try store.writeSyncingLater { try $0.countInWindow(bucket: bucket, now: 7_303, window: 3_600, limit: 8) } == 3_497,
                               "the counter one by one agrees")
            try giveBack(2, windowStart: 7_200)
            try expectContract(try take(5, at: 7_400) == 2, "the 2 given back")
            try expectContract(try take(10, at: 10_800) == 8, "the next window starts from 0")
            try giveBack(5, windowStart: 7_200)  // the row counts another window now: nothing
            try expectContract(try take(1, at: 10_801) == 0)
            try giveBack(100, windowStart: 10_800)
            try expectContract(try take(10, at: 10_802) == 8, "never below 0")
        },
        StoreContractCase("limits", "rate limits are kept in the store, keyed by hash") { store in
            let bucket = Array(SHA256.hash("bucket").prefix(16))
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 1000, interval: 60, perHour: 2) } == nil)
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 1010, interval: 60, perHour: 2) } == 50)
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 1060, interval: 60, perHour: 2) } == nil)
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 1200, interval: 60, perHour: 2) } == 3400)
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 4600, interval: 60, perHour: 2) } == nil)
        },
        StoreContractCase("limits", "40 threads reading a rate limit, deciding and writing: exactly the limit is let through") { store in
            // Each closure reads the bucket's events and adds one only if fewer than 5: with less than
            // serializable isolation across connections, several would read 4 and all add theirs.
            let bucket = Array(SHA256.hash("contended").prefix(16))
            let allowed = Counter()
            DispatchQueue.concurrentPerform(iterations: 40) { _ in
                if (try? store.write({ try $0.rateLimit(bucket: bucket, now: 1000, interval: 0, perHour: 5) })) == .some(nil) {
                    allowed.increment()
                }
            }
            try expectContract(allowed.value == 5)
        },
        StoreContractCase("limits", "the fixed-window counter: counts to the limit, then says when the next window starts") { store in
            let bucket: [UInt8] = Array(repeating: 1, count: 16)
            for _ in 0..<3 { try expectContract(try store.write { try $0.countInWindow(bucket: bucket, now: 7250, window: 3600, limit: 3) } == nil) }
            try expectContract(try store.write { try $0.countInWindow(bucket: bucket, now: 7260, window: 3600, limit: 3) } == 10_800 - 7260)
            try expectContract(try store.write { try $0.countInWindow(bucket: [2], now: 7260, window: 3600, limit: 3) } == nil, "buckets apart")
            try expectContract(try store.write { try $0.countInWindow(bucket: bucket, now: 10_800, window: 3600, limit: 3) } == nil, "reset in place")
        },
        StoreContractCase("limits", "fixed windows are pruned by their start, not before, at most the limit at a time") { store in
            try store.write { tx in
                for index in 0..<3 { _ = try tx.countInWindow(bucket: [UInt8(index)], now: 3_600, window: 3_600, limit: 5) }
                _ = try tx.countInWindow(bucket: [9], now: 7_200, window: 3_600, limit: 5)
            }
            try expectContract(try store.write { try $0.pruneRateWindows(startedBy: 3_599, limit: 10) }, equals: 0, "pruned by 3599")
            try expectContract(try store.write { try $0.pruneRateWindows(startedBy: 3_600, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneRateWindows(startedBy: 7_199, limit: 10) }, equals: 1, "the second batch")
            // The later window still counts: its 5th event fits, the 6th does not.
            for _ in 0..<4 { try expectContract(try store.write { try $0.countInWindow(bucket: [9], now: 7_300, window: 3_600, limit: 5) } == nil) }
            try expectContract(try store.write { try $0.countInWindow(bucket: [9], now: 7_300, window: 3_600, limit: 5) }, equals: 3_500, "the 6th")
        },
        StoreContractCase("limits", "a bucket forgets its events older than an hour when it counts, allowed or not; pruning takes what is left by time") { store in
            let bucket: [UInt8] = [7]
            // At least 1000 s apart: 1000 and 4000 are allowed; at 4650 the event at 1000 is an hour
            // old (forgotten), the one at 4000 refuses.
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 1_000, interval: 1_000, perHour: 0) } == nil, "at 1000")
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 4_000, interval: 1_000, perHour: 0) } == nil, "at 4000")
            try expectContract(try store.write { try $0.rateLimit(bucket: bucket, now: 4_650, interval: 1_000, perHour: 0) }, equals: 350, "at 4650")
            try expectContract(try store.write { try $0.pruneRateEvents(atOrBefore: 1_000, limit: 10) }, equals: 0, "the refused count forgot it")
            try expectContract(try store.write { try $0.pruneRateEvents(atOrBefore: 4_000, limit: 10) }, equals: 1, "the one at 4000")
        },
        StoreContractCase("limits", "a guess record reads back as set, is replaced, cleared, and pruned by its last failure") { store in
            try expectContract(try store.read { try $0.guessRecord(bucket: [1]) } == nil, "none yet")
            try store.write { try $0.setGuessRecord(bucket: [1], GuessRecord(failures: 1, lastFailureAt: 100)) }
            try store.write { try $0.setGuessRecord(bucket: [1], GuessRecord(failures: 2, lastFailureAt: 150)) }
            try store.write { try $0.setGuessRecord(bucket: [2], GuessRecord(failures: 5, lastFailureAt: 100)) }
            try store.write { try $0.setGuessRecord(bucket: [3], GuessRecord(failures: 1, lastFailureAt: 100)) }
            try expectContract(try store.read { try $0.guessRecord(bucket: [1]) }, equals: GuessRecord(failures: 2, lastFailureAt: 150), "replaced")
            try store.write { try $0.setGuessRecord(bucket: [3], nil) }
            try expectContract(try store.read { try $0.guessRecord(bucket: [3]) } == nil, "cleared")
            try expectContract(try store.write { try $0.pruneGuessRecords(lastFailureBy: 99, limit: 10) }, equals: 0, "pruned by 99")
            try expectContract(try store.write { try $0.pruneGuessRecords(lastFailureBy: 100, limit: 10) }, equals: 1, "pruned by 100")
            try expectContract(try store.read { try $0.guessRecord(bucket: [1]) } != nil, "the later failure kept")
        },
    ]
}
