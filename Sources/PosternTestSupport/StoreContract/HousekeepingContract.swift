import Foundation
import PosternCore

/// Housekeeping's deletes: each takes at most its limit of rows, and a round over the fixture's
/// rows deletes exactly those that reached their horizon.
enum HousekeepingContract {
    static let cases: [StoreContractCase] = [
        StoreContractCase("housekeeping", "each delete takes at most its limit of rows") { store in
            try store.write { tx in
                try tx.insertAccount(Account(uid: "u", createdAt: 0))
                for index in 0..<5 {
                    _ = try tx.consume(nonce: [UInt8(index)], expiresAt: 10)
                    try tx.insertActionRequest(
                        ActionRequest(id: "r\(index)", purpose: .signIn, email: HousekeepingFixture.address, createdAt: 0, expiresAt: 10))
                    try tx.insertRefreshToken(
                        RefreshTokenRecord(hash: [UInt8(index)], family: "f", uid: "u", authTime: 0, method: "m", createdAt: 0, expiresAt: 10))
                    _ = try tx.rateLimit(bucket: [UInt8(index)], now: 10, interval: 0, perHour: 0)
                    try tx.setGuessRecord(bucket: [UInt8(index)], GuessRecord(failures: 1, lastFailureAt: 10))
                }
            }
            for _ in 0..<2 {
                let removed = try store.write { tx in
                    [
                        try tx.pruneConsumedCodes(now: 10, limit: 2), try tx.pruneActionRequests(expiredBy: 10, limit: 2),
                        try tx.pruneRefreshTokens(expiredBy: 10, limit: 2), try tx.pruneRateEvents(atOrBefore: 10, limit: 2),
                        try tx.pruneGuessRecords(lastFailureBy: 10, limit: 2),
                    ]
                }
                try expectContract(removed == [2, 2, 2, 2, 2])
            }
            try expectContract(try store.write { tx in try tx.pruneConsumedCodes(now: 9, limit: 10) } == 0, "nothing expired before 10")
            try expectContract(try store.write { tx in try tx.pruneConsumedCodes(now: 10, limit: 10) } == 1)
        },
        StoreContractCase("housekeeping", "a round deletes exactly what reached its horizon, one row either side of each, and the next round the rest") { store in
            try HousekeepingFixture.seed(store)
            let clock = ManualClock(Date(timeIntervalSince1970: TimeInterval(HousekeepingFixture.now)))
            let housekeeper = Housekeeper(store: store, policy: HousekeepingFixture.policy, clock: clock)
            let round = try housekeeper.runRound()
            for rows in ExpiringRows.allCases { try expectContract(round.removed[rows], equals: 1, "\(rows) removed") }
            try expectContract(try HousekeepingFixture.survivors(store), equals: HousekeepingFixture.kept.subtracting(["rate-recent"]), "survivors")
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: Array("client-old".utf8)) } == nil, "the full client bucket went")
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: Array("client-recent".utf8)) } != nil, "the other stayed")
            // (A write: an event now, long after the next round's horizon.)
            try expectContract(try HousekeepingFixture.rateEventKept(store, "rate-old") == false, "the old rate event went")
            try expectContract(try store.read { try $0.outboxCounts() }[.queued], equals: 1, "an unfinished message is never purged, however old")
            clock.advance(by: 1)
            let next = try housekeeper.runRound()
            try expectContract(next.removed[.refreshTokens], equals: 2, "the live and the rotated token")
            try expectContract(next.total, equals: ExpiringRows.allCases.count + 1, "the second round's rows")
            try expectContract(try store.read { try $0.clientTokenTAT(bucket: Array("client-recent".utf8)) } == nil, "the client bucket full by now")
            try expectContract(try HousekeepingFixture.survivors(store).isEmpty, "nothing of the fixture left")
            try expectContract(try store.read { try $0.outboxCounts() }[.queued], equals: 1, "the unfinished message")
            try expectContract(
                try store.read { try $0.webhookDeliveries(state: .queued, limit: 10) }.map(\.webhookID), equals: ["webhook-queued"], "queued webhooks")
        },
    ]
}
