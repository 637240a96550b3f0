import Foundation
import PosternCore
import PosternStore

/// `postern-bench users DB COUNT`: the admin API's user list on a real SQLite file of COUNT
/// accounts (`user<i>@example.com`, ten to a creation second so that pages cut through ties),
/// filled in one transaction through the store. Times, through `OperatorTools`' store read (the
/// route's, without HTTP): the first page of 100, a deep page (page 5,000 of 100, reached by
/// following cursors; the middle page when there are fewer), and a prefix query of 100 matches.
/// Prints one `key=value…` line: the times are medians in µs, and `deep_created_at`/`deep_uid`
/// name the deep page's cursor so that bench/users can run the same keyset query in `sqlite3`.
enum UsersBench {
    static let pageSize = 100

    static func run(_ arguments: ArraySlice<String>) throws {
        guard let path = arguments.first, let count = arguments.dropFirst().first.flatMap(Int.init), count >= 1_000 else {
            throw CancellationError()
        }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        let base: Int64 = 1_700_000_000
        let fillStart = DispatchTime.now().uptimeNanoseconds
        try store.write { tx in
            for index in 0..<count {
                let uid = String(format: "u%07d", index)
                try tx.insertAccount(
                    Account(uid: uid, email: try EmailAddress.parse(String(format: "user%07d@example.com", index)), emailVerified: true,
                            createdAt: base + Int64(index / 10), providers: [.emailLink]))
            }
        }
        let fillSeconds = Double(DispatchTime.now().uptimeNanoseconds - fillStart) / 1e9

        func page(after cursor: UserCursor?, matching query: UserQuery? = nil) throws -> [Account] {
            try store.read { try $0.accounts(newestFirstAfter: cursor, matching: query, limit: pageSize + 1) }
        }
        // Follow the cursors to the deep page, as a client paging through would.
        let deepPage = min(5_000, count / pageSize / 2)
        let walkStart = DispatchTime.now().uptimeNanoseconds
        var cursor: UserCursor?
        var seen = 0
        for _ in 1..<deepPage {
            let rows = try page(after: cursor)
            guard rows.count > pageSize, let last = rows.prefix(pageSize).last else { throw CancellationError() }
            seen += pageSize
            cursor = UserCursor(createdAt: last.createdAt, uid: last.uid)
        }
        let walkSeconds = Double(DispatchTime.now().uptimeNanoseconds - walkStart) / 1e9
        guard let deep = cursor else { throw CancellationError() }
        let expectedFirst = String(format: "u%07d", count - 1 - seen)
        guard try page(after: deep).first?.uid == expectedFirst else { throw CancellationError() }

        let prefix = UserQuery(String(format: "user%05d", (count / 2) / 100))
        guard try page(after: nil, matching: prefix).count == pageSize else { throw CancellationError() }
        let first = try median { _ = try page(after: nil) }
        let deepTime = try median { _ = try page(after: deep) }
        let prefixTime = try median { _ = try page(after: nil, matching: prefix) }
        print(
            "accounts=\(count) fill_s=\(String(format: "%.1f", fillSeconds)) first_page_us=\(first) deep_page=\(deepPage) "
                + "deep_page_us=\(deepTime) prefix_us=\(prefixTime) walk_s=\(String(format: "%.2f", walkSeconds)) "
                + "deep_created_at=\(deep.createdAt) deep_uid=\(deep.uid) prefix=\(prefix.addressPrefix)")
    }

    /// The median of 201 runs of `body`, in µs (after 20 to warm the page cache and statements).
    static func median(_ body: () throws -> Void) throws -> Int {
        for _ in 0..<20 { try body() }
        var times: [UInt64] = []
        for _ in 0..<201 {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            times.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return Int(times.sorted()[times.count / 2] / 1_000)
    }
}
