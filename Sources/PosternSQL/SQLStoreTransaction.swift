import PosternCore
import PosternCrypto

/// The `StoreWriter` over one connection inside an open transaction: the store's SQL, written
/// once for SQLite and PostgreSQL (``SQLSession`` is the seam; the outbox claim is the one
/// statement written per dialect).
public final class SQLStoreTransaction: StoreWriter {
    let db: any SQLSession
    /// Set by the writes that make mail due (`enqueue`, `retryDead`); the writer reads and resets
    /// it around each closure, and rings the doorbell after a commit that kept one.
    public var queuedMail = false

    /// Seals the numbers of queued SMS; nil: this store cannot queue SMS (``enqueueSMS`` refuses).
    let phoneSeal: PhoneNumberSeal?

    /// The transaction over `db`, which has a transaction open (or opens one on its first statement).
    public init(_ db: any SQLSession, phoneSeal: PhoneNumberSeal? = nil) {
        self.db = db
        self.phoneSeal = phoneSeal
    }

    // MARK: lists of keys

    /// An `IN (…)` list of `keys` (duplicates dropped), in chunks of at most 256: each chunk's
    /// placeholders and values, padded by repeating its last key to a power of two, so a batch of
    /// any size prepares one of a few statements (PostgreSQL prepares each text once per connection).
    static func inLists(_ keys: [String]) -> [(placeholders: String, values: [SQLValue])] {
        var seen = Set<String>()
        let unique = keys.filter { seen.insert($0).inserted }
        return stride(from: 0, to: unique.count, by: 256).map { start in
            let chunk = Array(unique[start..<min(start + 256, unique.count)])
            var size = 1
            while size < chunk.count { size *= 2 }
            let padded = chunk + Array(repeating: chunk[chunk.count - 1], count: size - chunk.count)
            return (Array(repeating: "?", count: size).joined(separator: ", "), padded.map { .text($0) })
        }
    }

    // MARK: housekeeping

    /// Deletes at most `limit` rows of `table` that meet `condition`, chosen by `key`: one
    /// statement, run row-locked (``SQLSession/rowLocked(_:)``; PostgreSQL: READ COMMITTED), so a
    /// batch never makes a request's serializable transaction fail. The condition is checked again
    /// on the rows the DELETE locks, so a row a request changed meanwhile (a dead message queued
    /// again, a new failure on a guess budget) is kept. `from` narrows the rows looked at (the
    /// outbox's oldest), nil for all.
    func pruneBatch(table: String, key: String, condition: String, _ args: [SQLValue], limit: Int, from: String? = nil) throws -> Int {
        let source = from ?? table
        return try db.rowLocked {
            try db.execute(
                "DELETE FROM \(table) WHERE \(key) IN (SELECT \(key) FROM \(source) WHERE \(condition) LIMIT ?) AND \(condition)",
                args + [.integer(Int64(max(0, limit)))] + args)
        }
    }

    public func reclaimFreePages(_ pages: Int) throws {
        switch db.dialect {
        case .sqlite:
            // Each step of the pragma frees one page; `execute` steps it to the end.
            try db.execute("PRAGMA incremental_vacuum(\(max(0, pages)))")
        case .postgres:
            // Autovacuum makes the deleted rows' space reusable; the file is not shrunk.
            break
        }
    }
}
