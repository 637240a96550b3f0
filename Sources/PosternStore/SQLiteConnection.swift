internal import CSQLite
import PosternCore
import PosternSQL

/// An SQLite failure: the result code, SQLite's message, and the statement (never bound values).
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    let sql: String?

    var description: String { "SQLite error \(code): \(message)" + (sql.map { " in `\($0)`" } ?? "") }

    /// True when the database was locked by another process beyond the busy timeout.
    var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
}

/// One prepared statement. Not Sendable: it belongs to its connection's thread.
final class Statement: SQLRow {
    let handle: OpaquePointer
    let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// One SQLite connection, used by one thread at a time; caches its prepared statements.
final class SQLiteConnection: SQLSession {
    let dialect = SQLDialect.sqlite

    private let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    /// The WAL hook's state (`postern_wal_hook`): the commit checkpoint size, and the frames the
    /// last commit left; allocated by ``boundWAL(pages:)``.
    private var walState: UnsafeMutablePointer<Int32>?

    /// Opens (creating if needed) the database at `path` with WAL, full fsync on commit, foreign
    /// keys and a busy timeout.
    init(path: String, busyTimeoutMilliseconds: Int32 = 5000) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message, sql: nil)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
        walState?.deallocate()
    }

    /// Has this (the writer's) connection checkpoint (PASSIVE) after a commit once the WAL holds
    /// `pages` frames, and note the frames each commit leaves (``walFrames``): `postern_wal_hook`
    /// in the CSQLite shim. Called once, before the first commit.
    func boundWAL(pages: Int) {
        let state = walState ?? UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        state[0] = Int32(clamping: pages)
        state[1] = 0
        walState = state
        postern_sqlite3_bounded_wal(handle, state)
    }

    /// The frames the last commit left in the WAL (0 before ``boundWAL(pages:)``).
    var walFrames: Int { walState.map { Int($0[1]) } ?? 0 }

    private func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs a statement with no result rows, or several separated by `;` when `args` is empty.
    @discardableResult
    func execute(_ sql: String, _ args: [SQLValue] = []) throws -> Int {
        if args.isEmpty && sql.utf8.contains(UInt8(ascii: ";")) {
            let rc = sqlite3_exec(handle, sql, nil, nil, nil)
            guard rc == SQLITE_OK else { throw error(rc, sql) }
            return Int(sqlite3_changes(handle))
        }
        try query(sql, args) { _ in }
        return Int(sqlite3_changes(handle))
    }

    /// Runs a statement and calls `row` for each result row.
    func query(_ sql: String, _ args: [SQLValue] = [], row: (any SQLRow) throws -> Void) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
        }
        for (offset, value) in args.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let v): rc = sqlite3_bind_int64(statement.handle, index, v)
            case .text(let v): rc = sqlite3_bind_text(statement.handle, index, v, -1, postern_sqlite3_transient())
            case .blob(let v):
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob(statement.handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), postern_sqlite3_transient())
                }
            case .null: rc = sqlite3_bind_null(statement.handle, index)
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
        while true {
            let rc = sqlite3_step(statement.handle)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw error(rc, sql) }
            try row(statement)
        }
    }

    /// The statements prepared so far (for tests of the hot statements' plans).
    var preparedSQL: [String] { Array(cache.keys) }

    /// The rowid of the last row this connection inserted.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs an INSERT and returns the rowid SQLite gave the new row (its `id`).
    func insertReturningID(_ sql: String, _ args: [SQLValue]) throws -> Int64 {
        try execute(sql, args)
        return lastInsertedRowID
    }

    private func prepared(_ sql: String) throws -> Statement {
        if let statement = cache[sql] { return statement }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw error(rc, sql) }
        let statement = Statement(handle: raw, sql: sql)
        cache[sql] = statement
        return statement
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}
