import Foundation
import PosternCore
import PosternSQL
import Synchronization

/// The store on PostgreSQL, for several daemons on one database.
///
/// Each `read` and `write` is one transaction on a connection lent by a small pool (one thread per
/// connection at a time, as libpq requires). Writes are SERIALIZABLE, so the flows' read-decide-write
/// closures keep the guarantee ``Store`` documents across connections and daemons; a
/// serialization failure (40001) or a deadlock (40P01) runs the closure again, up to
/// ``maximumAttempts`` times. A transaction made only of the outbox's row-locked operations (a
/// claim, a lease-checked outcome) runs READ COMMITTED, so claims by several connections skip each
/// other's rows (`FOR UPDATE SKIP LOCKED`) instead of failing; see ``PostgresSession/Isolation``.
///
/// Queued writes (``queueWrite(syncingLater:gathering:_:done:)``: a request's mail, the outbox's
/// outcome records) are committed in batches by a few threads (``PostgresBatchWriter``), each
/// closure in a savepoint of its own, so many requests share one transaction and one WAL flush.
///
/// Durable: `write` returns after COMMIT, which waits for the WAL flush under the server's
/// `synchronous_commit` (on by default); `writeSyncingLater` commits with `synchronous_commit`
/// off for that transaction (flushed by the WAL writer within `wal_writer_delay`, 200 ms by
/// default). Commits of concurrent connections share the server's WAL flushes.
///
/// A connection the server closed (08xxx, 57P01) is dropped; the next transaction opens a new one
/// and prepares its statements afresh. A transaction that lost its connection before COMMIT was
/// sent is run again once on a new connection; one that lost it during COMMIT fails with
/// `unavailable` (it may or may not have committed).
public final class PostgresStore: QueuedWriteStore {
    /// How often a closure runs at most when the server keeps refusing to serialize it.
    static var maximumAttempts: Int { PostgresTransactions.maximumAttempts }

    /// Runs the transactions on the pool; shared with the writer's threads.
    private let transactions: PostgresTransactions
    /// The pool (``PostgresTransactions/pool``), for what runs outside a transaction.
    private var pool: PostgresPool { transactions.pool }
    /// Commits queued writes in batches.
    private let writer: PostgresBatchWriter
    /// Seals the numbers of queued SMS (the master key's), once set; empty: SMS cannot be queued.
    public let phoneSeal: PhoneSealSlot
    /// Rung after each commit that queued mail, and when another daemon says it queued some.
    public let mailDoorbell = MailDoorbell()
    /// LISTEN/NOTIFY between the daemons (nil with `notifications` off: polling alone).
    let mailChannel: PostgresMailChannel?

    /// The schema version this build migrates a database to (rows of `postern_migrations`); a
    /// database ahead of it is refused (`StoreError.newerSchema`).
    public static var knownSchemaVersion: Int { PostgresSchema.migrations.count }

    /// Connects, migrates (under the advisory lock) and checks the schema.
    /// - Parameters:
    ///   - connectionString: a `postgres://` URI or libpq `key=value` pairs.
    ///   - connections: the most connections the pool opens (more only for a moment, see ``PostgresPool``);
    ///     half of them (at least one) commit the queued writes (``PostgresBatchWriter``).
    ///   - notifications: wake-ups between daemons by LISTEN/NOTIFY on one more connection
    ///     (``PostgresMailChannel``); off (`--pg-poll-only`) for a pooler in transaction mode,
    ///     which cannot hold a LISTEN: the workers then find other daemons' mail by polling alone.
    /// - Throws: `StoreError.unavailable` (naming the server, never the password) when it cannot
    ///   connect or migrate; `StoreError.newerSchema` when a newer Postern migrated the database.
    public init(
        connectionString text: String, connections: Int = 8, notifications: Bool = true, phoneSeal: PhoneSealSlot = PhoneSealSlot()
    ) throws {
        self.phoneSeal = phoneSeal
        guard let connectionString = PostgresConnectionString(text) else {
            throw StoreError.unavailable("not a PostgreSQL connection string (postgres://… or key=value pairs)")
        }
        let pool = PostgresPool(connectionString, size: connections)
        do {
            let connection = try pool.borrow()
            defer { pool.giveBack(connection) }
            _ = try PostgresSchema.migrate(connection)
        } catch let error as PostgresError {
            throw StoreError.unavailable("cannot open \(connectionString): \(error.isConnectionFailure ? error.message : error.description)")
        }
        transactions = PostgresTransactions(connectionString: connectionString, pool: pool, phoneSeal: phoneSeal, mailDoorbell: mailDoorbell)
        writer = PostgresBatchWriter(transactions: transactions, threads: PostgresBatchWriter.threads(forConnections: connections))
        mailChannel = notifications ? PostgresMailChannel(connectionString, doorbell: mailDoorbell) : nil
        mailChannel?.start()
    }

    deinit {
        writer.close(waiting: false)
        mailChannel?.stop()
    }


    /// Round trips of the store's pool so far (the LISTEN connection's aside).
    public var serverRoundTrips: Int? { pool.roundTrips.value }

    /// The schema version the database is at.
    public func schemaVersion() throws -> Int {
        try withConnection { try PostgresSchema.version($0) }
    }

    public func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
        try transactions.transact(isolation: .readOnly, syncingLater: false) { try body($0) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try transactions.transact(isolation: .chosenByFirstStatement, syncingLater: false) { try body($0) }
    }

    public func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try transactions.transact(isolation: .chosenByFirstStatement, syncingLater: true) { try body($0) }
    }

    /// Queued to the batch writer without waiting: `done` is called from one of its threads after
    /// the commit of the batch that held `body` (or with the error: `body`'s, or `unavailable`
    /// once the store is closed). A `gathering` write (a delivery's outcome record) is committed
    /// with the others of its kind in a batch of their own; none waits for more to come.
    public func queueWrite<T: Sendable>(
        syncingLater: Bool, gathering: Bool, _ body: @escaping @Sendable (any StoreWriter) throws -> T,
        done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        if !writer.queue(BatchedWrite(syncingLater: syncingLater, gathering: gathering, body, done: done)) {
            done(.failure(StoreError.unavailable("the store is closed")))
        }
    }

    /// Makes every commit so far durable (one committed with `synchronous_commit` on flushes the
    /// WAL up to itself) and refuses later writes; reads still work.
    public func close() {
        // The queued writes first: they commit, and the writer refuses new ones.
        writer.close()
        guard !transactions.closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Announces the last commits' mail (a one-shot command's), then ends the LISTEN.
        mailChannel?.stop()
        _ = try? withConnection { connection in
            try connection.executeSimple("BEGIN; SELECT pg_current_xact_id(); COMMIT")
        }
        pool.drainIdle()
    }

    /// Runs `body` holding the session-level advisory lock `lock` on a connection of its own, or
    /// returns nil at once when another session (another daemon) holds it. The body's writes go
    /// through the pool's other connections as usual; the lock is given back when it returns, and
    /// by the server if the connection dies.
    public func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T? {
        let connection: PostgresConnection
        do { connection = try pool.borrow() } catch let error as PostgresError { throw error.storeError }
        defer { pool.giveBack(connection) }
        let taken: Bool
        do {
            // Scoped to the schema: two installations in one database (each in its own schema, as
            // the tests are) do not take each other's lock.
            let result = try connection.run(Self.lockExpression("pg_try_advisory_lock"), [.text(String(lock.key))])
            taken = result.rowCount == 1 && PostgresRow(result: result, row: 0).integer(0) != 0
        } catch let error as PostgresError {
            throw error.storeError
        }
        guard taken else { return nil }
        defer { _ = try? connection.run(Self.lockExpression("pg_advisory_unlock"), [.text(String(lock.key))]) }
        return try body()
    }

    /// `SELECT function(key)` for the advisory lock of `?` (the lock's key as text) in this schema.
    private static func lockExpression(_ function: String) -> String {
        "SELECT \(function)(hashtextextended(current_schema() || ':' || ?::text, 0))"
    }

    /// The LISTEN connection's server process (0 while it has none), LISTENs so far, NOTIFYs
    /// sent and heard (for tests).
    var notificationState: (backendPID: Int32, listens: Int, sent: Int, heard: Int) {
        guard let channel = mailChannel else { return (0, 0, 0, 0) }
        return (
            channel.backendPID.load(ordering: .relaxed), channel.listens.load(ordering: .relaxed),
            channel.sent.load(ordering: .relaxed), channel.heard.load(ordering: .relaxed)
        )
    }

    /// Transactions run again after a serialization failure or deadlock, so far (for tests).
    var retries: Int { transactions.retries }

    /// How the batch writer's batches went so far.
    var batches: WriteBatchCounts { transactions.batches }

    /// How the batch writer's batches went so far (`/metrics`).
    public var writeBatches: WriteBatchCounts? { transactions.batches }

    /// Connections the pool holds open now (for tests).
    var openConnections: Int { pool.openCount }

    /// The server processes of the pool's idle connections (for tests that end them).
    var idleBackendPIDs: [Int32] { pool.idleBackendPIDs }

    /// Runs `body` on a lent connection outside any transaction of the store's.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection: PostgresConnection
        do { connection = try pool.borrow() } catch let error as PostgresError { throw error.storeError }
        defer { pool.giveBack(connection) }
        do { return try body(connection) } catch let error as PostgresError { throw error.storeError }
    }
}
