import Foundation
import PosternCore
import PosternSQL
import Synchronization

/// The embedded store: one SQLite file in WAL mode. Every `write` is fsynced before it returns
/// (`synchronous=FULL`); batches made only of `writeSyncingLater` writes (delivery outcomes) commit
/// with `synchronous=NORMAL` and reach the disk with the next full commit or within 0.2 s.
///
/// Writes go through one writer thread that batches whatever callers are waiting into a single
/// transaction (group commit): each caller's closure runs in its own savepoint, so a closure that
/// throws leaves nothing behind while the others in the batch still commit; every caller returns
/// only after the batch's fsync. Reads use a small pool of connections and see a consistent
/// snapshot. Several processes may share the file (the CLI beside the daemon).
public final class SQLiteStore: QueuedWriteStore {
    /// Largest number of closures committed together.
    static let maximumBatch = 256

    private let path: String
    private let writer: GroupCommitWriter
    /// Copies the WAL into the file beside the writer's commits.
    private let checkpointer: WALCheckpointer?
    /// Seals the numbers of queued SMS (the master key's), once set; empty: SMS cannot be queued.
    public let phoneSeal: PhoneSealSlot
    private let readers: Mutex<[ReaderConnection]>

    /// Opens or creates the database at `path` and runs pending migrations. `clock` times the
    /// writer's deferred fsyncs (``GroupCommitWriter/syncInterval``); tests pass a manual one.
    /// - Throws: `StoreError.unavailable` when the file cannot be opened or migrated.
    public convenience init(path: String, clock: any MonotonicClock = SystemMonotonicClock(), phoneSeal: PhoneSealSlot = PhoneSealSlot()) throws {
        try self.init(path: path, clock: clock, phoneSeal: phoneSeal, backgroundCheckpoints: true)
    }

    /// The store, for tests: `backgroundCheckpoints` false starts no ``WALCheckpointer``, and the
    /// writer's commits checkpoint once the WAL holds `commitCheckpointPages`.
    init(
        path: String, clock: any MonotonicClock, phoneSeal: PhoneSealSlot, backgroundCheckpoints: Bool,
        commitCheckpointPages: Int = WALCheckpointer.commitCheckpointPages, checkpointInterval: Double = WALCheckpointer.interval
    ) throws {
        self.path = path
        self.phoneSeal = phoneSeal
        // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database
        // file's mode, and a database made 0644 and narrowed afterwards left them readable by every
        // local user (a WAL held password hashes and addresses).
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 { Glibc.close(created) }
        do {
            let connection = try SQLiteConnection(path: path)
            try Self.migrate(connection)
            Self.narrowSideFiles(of: path)
            try WALCheckpointer.deferCommitCheckpoints(on: connection, pages: commitCheckpointPages)
            checkpointer = backgroundCheckpoints
                ? WALCheckpointer(path: path, commitPages: commitCheckpointPages, interval: checkpointInterval) : nil
            writer = GroupCommitWriter(connection: connection, clock: clock, phoneSeal: phoneSeal, checkpointer: checkpointer)
        } catch let error as SQLiteError {
            throw StoreError.unavailable("cannot open the database at \(path): \(error.message)")
        }
        readers = Mutex([])
    }

    /// Gives the -wal and -shm files no more access than the database file has (a database
    /// created by an older version may have left them 0644).
    static func narrowSideFiles(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let mode = info.st_mode & 0o777
        for suffix in ["-wal", "-shm"] {
            var side = stat()
            let sidePath = path + suffix
            if stat(sidePath, &side) == 0, side.st_mode & 0o777 & ~mode != 0 { chmod(sidePath, mode) }
        }
    }

    /// The schema version this build migrates a database to (`PRAGMA user_version` after
    /// migrating); a database ahead of it is refused (`StoreError.newerSchema`).
    public static var knownSchemaVersion: Int { Schema.migrations.count }

    /// The schema version the database is at.
    public func schemaVersion() throws -> Int {
        let connection = try borrowReader()
        defer { giveBack(connection) }
        return Int(try connection.db.first("PRAGMA user_version") { $0.integer(0) } ?? 0)
    }

    static func migrate(_ db: SQLiteConnection) throws {
        try useIncrementalVacuum(db) {
            try db.execute("BEGIN IMMEDIATE")
            do {
                let current = Int(try db.first("PRAGMA user_version") { $0.integer(0) } ?? 0)
                guard current <= Schema.migrations.count else {
                    throw StoreError.newerSchema(found: current, known: Schema.migrations.count)
                }
                for (index, sql) in Schema.migrations.enumerated() where index >= current {
                    try db.execute(sql)
                    try db.execute("PRAGMA user_version = \(index + 1)")
                }
                try db.execute("COMMIT")
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `migrations` with the database in `auto_vacuum=INCREMENTAL` mode, so that housekeeping
    /// can give the pages its deletes free back to the file system (``SQLStoreTransaction/reclaimFreePages(_:)``).
    ///
    /// The mode can only be chosen before the first table exists, or by a VACUUM, which cannot run
    /// inside a transaction (so not in a numbered migration). A new database gets the pragma
    /// before its first migration creates anything. A database made before it is rebuilt once,
    /// by a VACUUM after the migrations: it rewrites the whole file (it needs as much free disk
    /// again, and holds the write lock meanwhile — seconds for a few hundred megabytes), once, at
    /// the first start of this version. If it fails (the disk is full, another process holds a
    /// lock) the store still opens, and the next start tries again; until then deletes leave the
    /// freed pages inside the file, where new rows reuse them.
    static func useIncrementalVacuum(_ db: SQLiteConnection, migrations: () throws -> Void) throws {
        let tables = try db.first("SELECT count(*) FROM sqlite_master") { $0.integer(0) } ?? 0
        if tables == 0 { try db.execute("PRAGMA auto_vacuum = INCREMENTAL") }
        try migrations()
        guard try autoVacuum(db) != Schema.incrementalAutoVacuum else { return }
        try db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        _ = try? db.execute("VACUUM")
    }

    /// The database's `auto_vacuum` mode (0 none, 1 full, 2 incremental).
    static func autoVacuum(_ db: SQLiteConnection) throws -> Int64 {
        try db.first("PRAGMA auto_vacuum") { $0.integer(0) } ?? 0
    }

    public func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
        let connection = try borrowReader()
        defer { giveBack(connection) }
        do {
            try connection.db.execute("BEGIN")
            defer { _ = try? connection.db.execute("COMMIT") }
            return try body(SQLStoreTransaction(connection.db, phoneSeal: phoneSeal.current))
        } catch let error as SQLiteError {
            throw StoreError.unavailable(error.description)
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try writer.submit(syncingLater: false, body)
    }

    /// Committed with `synchronous=NORMAL` when every closure of the batch allows it: in the WAL
    /// and the page cache, fsynced by the next full commit or by a checkpoint at most
    /// ``GroupCommitWriter/syncInterval`` later.
    public func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try writer.submit(syncingLater: true, body)
    }

    /// Queued to the writer without waiting: `done` is called from its thread after the commit.
    public func queueWrite<T: Sendable>(
        syncingLater: Bool, gathering: Bool, _ body: @escaping @Sendable (any StoreWriter) throws -> T,
        done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        writer.queue(syncingLater: syncingLater, gathering: gathering, body, done: done)
    }

    /// Commits what is queued, flushes to disk what was committed without fsync, and refuses
    /// writes from then on (`StoreError.unavailable`). Reads still work. For a graceful stop.
    public func close() {
        writer.close()
        checkpointer?.close()
    }

    /// Rung after each commit that queued mail.
    public var mailDoorbell: MailDoorbell { writer.doorbell }

    /// A SQLite file is shared only by processes on this machine (WAL needs shared memory).
    public var isConfinedToThisMachine: Bool { true }

    /// How the writer's commits went so far (for tests).
    var commitCounts: GroupCommitWriter.Counts { writer.counts }

    /// Checkpoints the ``WALCheckpointer`` ran so far (for tests).
    var backgroundCheckpoints: Int { checkpointer?.checkpoints.load(ordering: .relaxed) ?? 0 }

    /// Whether the ``WALCheckpointer``'s thread runs now (for tests).
    var checkpointerRunning: Bool { checkpointer?.isRunning ?? false }

    private func borrowReader() throws -> ReaderConnection {
        if let connection = readers.withLock({ $0.popLast() }) { return connection }
        do {
            return ReaderConnection(db: try SQLiteConnection(path: path))
        } catch let error as SQLiteError {
            throw StoreError.unavailable(error.description)
        }
    }

    private func giveBack(_ connection: ReaderConnection) {
        readers.withLock { if $0.count < 16 { $0.append(connection) } }
    }
}

/// A reader connection in the pool. `@unchecked Sendable`: the pool's `Mutex` hands each to one
/// thread at a time.
private final class ReaderConnection: @unchecked Sendable {
    let db: SQLiteConnection
    init(db: SQLiteConnection) { self.db = db }
}
