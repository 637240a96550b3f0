import Foundation
import PosternCore
import PosternSQL
import Synchronization

/// Runs the store's transactions on the pool: one closure in a transaction of its own
/// (``transact(isolation:syncingLater:_:)``), or a batch of queued closures in one
/// (``commit(_:)``, for ``PostgresBatchWriter``). Shared by ``PostgresStore`` and its writer's
/// threads, which must not hold the store itself (its `deinit` ends them).
final class PostgresTransactions: Sendable {
    /// How often a closure runs at most when the server keeps refusing to serialize it.
    static let maximumAttempts = 30

    let connectionString: PostgresConnectionString
    let pool: PostgresPool
    /// Seals the numbers of queued SMS (the master key's), once set; empty: SMS cannot be queued.
    let phoneSeal: PhoneSealSlot
    /// Rung after each commit that queued mail.
    let mailDoorbell: MailDoorbell
    /// Set by ``PostgresStore/close()``: writes are refused from then on.
    let closed = Atomic<Bool>(false)
    private let retryCount = Atomic<Int>(0)
    private let batchCounts = Mutex(WriteBatchCounts())

    init(connectionString: PostgresConnectionString, pool: PostgresPool, phoneSeal: PhoneSealSlot, mailDoorbell: MailDoorbell) {
        self.connectionString = connectionString
        self.pool = pool
        self.phoneSeal = phoneSeal
        self.mailDoorbell = mailDoorbell
    }

    /// Transactions run again after a serialization failure or deadlock, so far.
    var retries: Int { retryCount.load(ordering: .relaxed) }

    /// How the batches went so far.
    var batches: WriteBatchCounts { batchCounts.withLock { $0 } }

    /// Runs `body` in one transaction, again after a serialization failure, a deadlock, a lost
    /// connection (before COMMIT) or a row-locked start that turned out to need SERIALIZABLE.
    func transact<T>(
        isolation: PostgresSession.Isolation, syncingLater: Bool, _ body: (SQLStoreTransaction) throws -> T
    ) throws -> T {
        if isolation != .readOnly, closed.load(ordering: .acquiring) { throw StoreError.unavailable("the store is closed") }
        var isolation = isolation
        var reconnects = 0
        var attempt = 0
        while true {
            attempt += 1
            let connection = try borrow()
            let session = PostgresSession(connection, isolation: isolation, syncingLater: syncingLater)
            let transaction = SQLStoreTransaction(session, phoneSeal: phoneSeal.current)
            let outcome = Result { try body(transaction) }
            var failure = session.failure
            if failure == nil, case .success = outcome {
                do { try session.commit() } catch let error as PostgresError { failure = error } catch {}
                if failure == nil {
                    pool.giveBack(connection)
                    if transaction.queuedMail { mailDoorbell.ring() }
                    return try outcome.get()
                }
                if let lost = failure, lost.isConnectionFailure { throw lostDuringCommit(lost, connection) }
            }
            session.rollback()
            pool.giveBack(connection)
            if let failure {
                if failure.isRetryable && attempt < Self.maximumAttempts {
                    retryCount.add(1, ordering: .relaxed)
                    Self.backOff(attempt)
                    continue
                }
                if failure.isConnectionFailure {
                    // The server went away or restarted: the idle connections are most likely
                    // dead too, and the retry must not draw one of them.
                    pool.drainIdle()
                    if reconnects < 1 {
                        reconnects += 1
                        continue
                    }
                }
                if failure.isRetryable {
                    throw StoreError.unavailable("PostgreSQL refused to serialize the transaction \(attempt) times (\(failure.sqlState ?? ""))")
                }
                throw failure.storeError
            }
            if session.needsSerializable {
                isolation = .serializable
                continue
            }
            return try outcome.get()
        }
    }

    /// Commits `batch` in one transaction, each closure in a savepoint of its own: a closure that
    /// throws is undone alone and reports its error, the others commit together, and each is told
    /// after the commit. A batch the server fails as a whole (a serialization failure, a deadlock,
    /// a statement's error, a lost connection before COMMIT) is rolled back and each of its
    /// closures is run again in a transaction of its own (``transact(isolation:syncingLater:_:)``,
    /// with its retries), so one closure's conflict or error is never another's. A batch that
    /// began READ COMMITTED and needs SERIALIZABLE is run again SERIALIZABLE from the start.
    func commit(_ batch: [BatchedWrite]) {
        guard batch.count > 1, !closed.load(ordering: .acquiring) else {
            for write in batch { runAlone(write) }
            return
        }
        var isolation = PostgresSession.Isolation.chosenByFirstStatement
        let syncingLater = batch.allSatisfy(\.syncingLater)
        while true {
            let connection: PostgresConnection
            do { connection = try borrow() } catch {
                for write in batch { write.finish(.failure(error)) }
                return
            }
            let session = PostgresSession(connection, isolation: isolation, syncingLater: syncingLater)
            let transaction = SQLStoreTransaction(session, phoneSeal: phoneSeal.current)
            var outcomes: [Result<Void, any Error>] = []
            var queuedMail = false
            for write in batch {
                session.beginClosure()
                transaction.queuedMail = false
                let outcome = Result { try write.attempt(transaction) }
                if session.failure != nil || session.needsSerializable { break }
                switch outcome {
                case .success:
                    session.keepClosure()
                    queuedMail = queuedMail || transaction.queuedMail
                case .failure:
                    session.undoClosure()
                }
                outcomes.append(outcome)
            }
            if outcomes.count == batch.count {
                do {
                    try session.commit()
                    pool.giveBack(connection)
                    batchCounts.withLock {
                        $0.committed += 1
                        $0.writes += batch.count
                    }
                    if queuedMail { mailDoorbell.ring() }
                    for (write, outcome) in zip(batch, outcomes) { write.finish(outcome) }
                    return
                } catch let error as PostgresError where error.isConnectionFailure {
                    let failure = lostDuringCommit(error, connection)
                    for write in batch { write.finish(.failure(failure)) }
                    return
                } catch {}
            }
            session.rollback()
            pool.giveBack(connection)
            if session.needsSerializable && isolation == .chosenByFirstStatement {
                isolation = .serializable
                continue
            }
            batchCounts.withLock { $0.fellBack += 1 }
            for write in batch { runAlone(write) }
            return
        }
    }

    /// Runs `write` in a transaction of its own and reports how it went.
    private func runAlone(_ write: BatchedWrite) {
        write.finish(Result { try transact(isolation: .chosenByFirstStatement, syncingLater: write.syncingLater) { try write.attempt($0) } })
    }

    /// A connection from the pool, or `unavailable` naming the server (never the password).
    private func borrow() throws -> PostgresConnection {
        do {
            return try pool.borrow()
        } catch let error as PostgresError {
            throw StoreError.unavailable("cannot connect to \(connectionString): \(error.message)")
        }
    }

    /// The connection went during COMMIT: the pool's idle ones are dropped too, and the caller
    /// learns that the write may or may not have been committed.
    private func lostDuringCommit(_ lost: PostgresError, _ connection: PostgresConnection) -> StoreError {
        pool.giveBack(connection)
        pool.drainIdle()
        return StoreError.unavailable(
            "the connection to PostgreSQL was lost during COMMIT; the write may or may not have been committed: \(lost.message)")
    }

    /// Sleeps a random moment that grows with the attempt (at most about 30 ms), so that the
    /// transactions that collided do not collide again in step.
    private static func backOff(_ attempt: Int) {
        let ceiling = min(30_000, 500 << min(attempt, 6))
        usleep(useconds_t(Int.random(in: 0...ceiling)))
    }
}

/// A closure queued to the ``PostgresBatchWriter``, its result type erased. `@unchecked Sendable`:
/// its outcome is written and read only by the writer thread that runs it.
final class BatchedWrite: @unchecked Sendable {
    /// The caller allows a commit without waiting for the WAL flush.
    let syncingLater: Bool
    /// A delivery's outcome record (row-locked, READ COMMITTED): committed apart from the requests'
    /// writes, which a batch runs SERIALIZABLE.
    let gathering: Bool
    /// Runs the caller's closure and keeps what it returned (run again when the batch falls back).
    let attempt: (SQLStoreTransaction) throws -> Void
    /// Tells the caller: what the closure returned, or its error or the commit's.
    let finish: (Result<Void, any Error>) -> Void

    init<T: Sendable>(
        syncingLater: Bool, gathering: Bool, _ body: @escaping @Sendable (any StoreWriter) throws -> T,
        done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        self.syncingLater = syncingLater
        self.gathering = gathering
        let kept = KeptValue<T>()
        attempt = { transaction in kept.value = try body(transaction) }
        finish = { outcome in
            switch outcome {
            case .success:
                if let value = kept.value { done(.success(value)) } else { done(.failure(StoreError.unavailable("the writer produced no result"))) }
            case .failure(let error):
                done(.failure(error))
            }
        }
    }
}

/// What a batched closure returned. `@unchecked Sendable`: only its writer thread touches it.
private final class KeptValue<T>: @unchecked Sendable {
    var value: T?
}
