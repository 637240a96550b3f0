import PosternSQL

/// One attempt at one transaction on a borrowed connection: the ``SQLSession`` the store's SQL
/// runs on. The transaction begins with its first statement, so that its isolation can follow
/// what that statement is (see ``Isolation``).
final class PostgresSession: SQLSession {
    /// How the transaction isolates itself.
    enum Isolation {
        /// A snapshot for a read closure: `REPEATABLE READ, READ ONLY`.
        case readOnly
        /// Every write closure may run SERIALIZABLE; one whose first statement is a row-locked
        /// operation (``SQLSession/rowLocked(_:)``: a lease-checked outbox update or claim) runs
        /// READ COMMITTED, so a claim skips the rows another connection holds instead of failing.
        /// If such a transaction then runs any other statement, the session refuses it
        /// (``needsSerializable``) and the store runs the closure again, SERIALIZABLE from the start.
        case chosenByFirstStatement
        /// SERIALIZABLE from the first statement.
        case serializable
    }

    let dialect = SQLDialect.postgres
    let connection: PostgresConnection
    private let isolation: Isolation
    private let syncingLater: Bool
    /// Whether BEGIN was sent; then whether it was READ COMMITTED.
    private(set) var begun = false
    private var readCommitted = false
    private var rowLockedDepth = 0
    /// The first failure the server reported: the transaction is aborted from then on.
    private(set) var failure: PostgresError?
    /// A READ COMMITTED transaction was asked for a statement that needs SERIALIZABLE.
    private(set) var needsSerializable = false
    /// Statements queued by ``executeDeferred(_:_:)``, sent ahead of the next statement that is
    /// waited for, or of COMMIT, in its round trip.
    private var deferred: [PostgresConnection.Pipelined] = []
    /// Where the closure that runs now in a batch (``PostgresBatchWriter``) began: its savepoint is
    /// owed (sent ahead of its first statement, none if it runs none), queued at an index of
    /// `deferred`, or sent.
    private var savepoint: SavepointState = .none

    private enum SavepointState {
        case none
        case owed
        case queued(at: Int)
        case sent
    }

    /// The signal that unwinds a closure whose transaction must start again SERIALIZABLE.
    struct SerializableNeeded: Error {}

    init(_ connection: PostgresConnection, isolation: Isolation, syncingLater: Bool) {
        self.connection = connection
        self.isolation = isolation
        self.syncingLater = syncingLater
    }

    func rowLocked<T>(_ body: () throws -> T) throws -> T {
        rowLockedDepth += 1
        defer { rowLockedDepth -= 1 }
        return try body()
    }

    @discardableResult
    func execute(_ sql: String, _ args: [SQLValue]) throws -> Int {
        try run(sql, args).changedRows
    }

    func query(_ sql: String, _ args: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        let result = try run(sql, args)
        for index in 0..<result.rowCount { try row(PostgresRow(result: result, row: index)) }
    }

    func insertReturningID(_ sql: String, _ args: [SQLValue]) throws -> Int64 {
        let result = try run(sql + " RETURNING id", args)
        guard result.rowCount == 1 else { throw PostgresError.noRow(sql) }
        return PostgresRow(result: result, row: 0).integer(0)
    }

    /// Queues `sql`: it is sent in the round trip of the transaction's next statement or of its
    /// COMMIT (so a request's writes cost no wait of their own), still before that statement, so
    /// every later statement sees it. Its failure is thrown by that later call.
    func executeDeferred(_ sql: String, _ args: [SQLValue]) throws {
        if let failure { throw failure }
        if let begin = try beginIfNeeded() { deferred += begin.map { .text($0) } }
        if case .owed = savepoint {
            savepoint = .queued(at: deferred.count)
            deferred.append(.text(Self.savepointStart))
        }
        deferred.append(.prepared(sql, args))
    }

    // MARK: one closure of a batch

    static let savepointStart = "SAVEPOINT postern_write"

    /// Marks where the next closure of a batch begins: what it runs from here can be undone alone
    /// (``undoClosure()``). The SAVEPOINT costs no round trip: it goes ahead of the closure's first
    /// statement, and a closure that runs none sends none.
    func beginClosure() {
        savepoint = .owed
    }

    /// Keeps what the closure ran: a savepoint not sent yet is dropped, a sent one is released
    /// ahead of the next statement (so savepoints never nest).
    func keepClosure() {
        switch savepoint {
        case .none, .owed: break
        case .queued(let index): deferred.remove(at: index)
        case .sent: deferred.append(.text("RELEASE SAVEPOINT postern_write"))
        }
        savepoint = .none
    }

    /// Undoes what the closure ran since ``beginClosure()``: statements not sent yet are dropped;
    /// once some were sent, a ROLLBACK TO the savepoint goes ahead of the next statement. Only for
    /// a closure that threw without the server failing (``failure`` nil): a server failure aborts
    /// the whole transaction.
    func undoClosure() {
        switch savepoint {
        case .none, .owed: break
        case .queued(let index): deferred.removeSubrange(index...)
        case .sent:
            deferred += [.text("ROLLBACK TO SAVEPOINT postern_write"), .text("RELEASE SAVEPOINT postern_write")]
        }
        savepoint = .none
    }

    /// Begins the transaction if this is its first statement, then runs `sql` (with the deferred
    /// statements ahead of it, in one round trip); records the failure that aborts the transaction.
    private func run(_ sql: String, _ args: [SQLValue]) throws -> PostgresResult {
        if let failure { throw failure }
        do {
            var ahead = deferred
            deferred = []
            // The transaction's first statement carries its BEGIN in the same round trip.
            if let begin = try beginIfNeeded() { ahead += begin.map { .text($0) } }
            if case .owed = savepoint { ahead.append(.text(Self.savepointStart)) }
            if case .none = savepoint {} else { savepoint = .sent }
            if ahead.isEmpty { return try connection.run(sql, args) }
            return try connection.pipeline(ahead + [.prepared(sql, args)])[ahead.count]
        } catch let error as PostgresError {
            failure = error
            throw error
        }
    }

    /// The statements that begin the transaction, when `sql` is its first (nil after).
    private func beginIfNeeded() throws -> [String]? {
        if begun {
            if readCommitted && rowLockedDepth == 0 {
                needsSerializable = true
                throw SerializableNeeded()
            }
            return nil
        }
        let begin: String
        switch isolation {
        case .readOnly:
            begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
        case .serializable:
            begin = "BEGIN ISOLATION LEVEL SERIALIZABLE"
        case .chosenByFirstStatement:
            readCommitted = rowLockedDepth > 0
            begin = readCommitted ? "BEGIN ISOLATION LEVEL READ COMMITTED" : "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
        begun = true
        // Committed at once, flushed by the WAL writer within wal_writer_delay (200 ms by default).
        if syncingLater && isolation != .readOnly { return [begin, "SET LOCAL synchronous_commit TO off"] }
        return [begin]
    }

    /// Commits what ran, with the deferred statements ahead of COMMIT in its round trip. Throws
    /// the failure that aborted the transaction, a deferred statement's, or COMMIT's own.
    func commit() throws {
        if let failure { throw failure }
        guard begun else { return }
        do {
            let committed: Bool
            if deferred.isEmpty {
                committed = try connection.commit()
            } else {
                let statements = deferred + [.text("COMMIT")]
                deferred = []
                committed = try connection.pipeline(statements).last?.commandStatus == "COMMIT"
            }
            guard committed else {
                throw PostgresError(
                    sqlState: "40001", message: "the transaction was rolled back at commit", constraint: nil, sql: "COMMIT",
                    connectionLost: false)
            }
        } catch let error as PostgresError {
            failure = error
            throw error
        }
    }

    /// Rolls back what ran, if anything; a connection that cannot roll back is not reused.
    /// Deferred statements not yet sent are dropped.
    func rollback() {
        deferred = []
        guard begun, connection.isUsable else { return }
        _ = try? connection.executeSimple("ROLLBACK")
    }
}

@available(*, unavailable)
extension PostgresSession: Sendable {}

extension PostgresError {
    /// An INSERT … RETURNING that returned no row.
    static func noRow(_ sql: String) -> PostgresError {
        PostgresError(sqlState: nil, message: "the statement returned no row", constraint: nil, sql: sql, connectionLost: false)
    }
}
