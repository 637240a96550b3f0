/// A value bound to or read from SQL.
public enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// One result row, read by column index (0-based), as each database's driver hands it out.
public protocol SQLRow {
    /// The column as an integer (a boolean reads as 0 or 1); 0 when NULL.
    func integer(_ column: Int32) -> Int64
    /// Whether the column is NULL.
    func isNull(_ column: Int32) -> Bool
    /// The column as UTF-8 text, or nil when NULL.
    func text(_ column: Int32) -> String?
    /// The column's bytes, or nil when NULL.
    func blob(_ column: Int32) -> [UInt8]?
}

extension SQLRow {
    /// The column as an integer, or nil when NULL.
    public func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }
}

/// Which SQL a statement must be written in where the two stores' dialects differ (the outbox
/// claim); everything else is written once, with `?` placeholders, for both.
public enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// A connection inside an open transaction, as ``SQLStoreTransaction`` uses it: the one seam
/// between the store's SQL (written once) and a database's driver (SQLite, libpq).
///
/// Statements use `?` placeholders; a driver that numbers them (`$1`) rewrites them when it
/// prepares the statement. Errors are the driver's own; the store maps them to `StoreError`.
public protocol SQLSession: AnyObject {
    /// The dialect of the statements that differ.
    var dialect: SQLDialect { get }
    /// Runs a statement with no result rows; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ args: [SQLValue]) throws -> Int
    /// Runs a statement whose answer nobody waits for (a write that cannot be refused in practice,
    /// its changed-row count unused): a driver may send it with the transaction's next statement
    /// or its commit (PostgreSQL pipelines it), so its failure may be thrown by that later call.
    func executeDeferred(_ sql: String, _ args: [SQLValue]) throws
    /// Runs a statement and calls `row` for each result row.
    func query(_ sql: String, _ args: [SQLValue], row: (any SQLRow) throws -> Void) throws
    /// Runs an INSERT into a table with an integer `id` key and returns the new row's id.
    func insertReturningID(_ sql: String, _ args: [SQLValue]) throws -> Int64
    /// Runs `body`, a store operation that is one statement whose every condition is checked on
    /// the rows it locks and changes (a lease-checked outbox update): it needs row locks, not a
    /// serializable snapshot. A store that runs writes concurrently may run a transaction made
    /// only of such operations with less isolation (PostgreSQL: READ COMMITTED, so queue claims
    /// skip locked rows instead of failing). Others just run it.
    func rowLocked<T>(_ body: () throws -> T) throws -> T
}

extension SQLSession {
    /// Runs a statement without arguments; returns how many rows it changed.
    @discardableResult
    public func execute(_ sql: String) throws -> Int { try execute(sql, []) }

    /// Runs a statement without arguments, calling `row` for each result row.
    public func query(_ sql: String, row: (any SQLRow) throws -> Void) throws { try query(sql, [], row: row) }

    /// The first row mapped by `map`, or nil.
    public func first<T>(_ sql: String, _ args: [SQLValue] = [], _ map: (any SQLRow) throws -> T) throws -> T? {
        var result: T?
        try query(sql, args) { row in if result == nil { result = try map(row) } }
        return result
    }

    /// Runs the statement at once.
    public func executeDeferred(_ sql: String, _ args: [SQLValue]) throws { try execute(sql, args) }

    /// Runs `body` with the session's isolation unchanged.
    public func rowLocked<T>(_ body: () throws -> T) throws -> T { try body() }
}
