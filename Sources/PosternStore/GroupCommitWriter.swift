import Foundation
import PosternCore
import PosternSQL
import Synchronization

/// One writer thread that commits waiting closures in batches: one fsync for many callers.
///
/// A batch whose closures all allow it (``SQLiteStore/writeSyncingLater(_:)``) commits with
/// `synchronous=NORMAL`: no fsync; the WAL is flushed by the next full commit, or by a passive
/// checkpoint once ``syncInterval`` has passed with nothing else to do.
///
/// Intervals are measured on an injected ``MonotonicClock``, not `Date()`: a stepped wall clock
/// must not leave a commit unflushed or flush early, and tests move a manual clock instead of
/// sleeping through the interval.
///
/// `@unchecked Sendable`: the queue and the counts lock themselves; the connection and the sync
/// state (`relaxed`, `unsyncedSince`) are only touched by the writer thread.
final class GroupCommitWriter: @unchecked Sendable {
    /// Longest time a commit made without fsync waits for one.
    static let syncInterval: Duration = .milliseconds(200)
    /// How soon a flush that found another checkpoint running is tried again.
    static let busyFlushRetry: Duration = .milliseconds(5)
    /// Longest a batch of gathering writes (``queue(syncingLater:gathering:_:done:)``) waits for
    /// more before it is committed, and how many end the wait at once.
    static let gatheringWait: Duration = .microseconds(500)
    static let gatheringBatch = 8

    /// Commits so far: with an fsync, without, and the flushes of the latter.
    struct Counts: Sendable, Equatable {
        var synced = 0
        var deferred = 0
        var flushes = 0
    }

    /// The callers' closures; the writer thread is its one consumer, so `close()` waits for it.
    private let pending: BatchQueue<PendingWrite>
    private let recorded = Mutex(Counts())
    private let clock: any MonotonicClock
    private let connection: SQLiteConnection
    /// Seals the numbers of queued SMS, for each batch's transaction.
    private let phoneSeal: PhoneSealSlot
    /// Copies the WAL into the file beside the commits; nil leaves that to the commits.
    private let checkpointer: WALCheckpointer?
    /// Rung after a commit that kept a closure which queued mail.
    let doorbell = MailDoorbell()
    /// Whether the connection is at `synchronous=NORMAL` now.
    private var relaxed = false
    /// When the last commit without fsync was made, while the WAL holds one not yet flushed.
    private var unsyncedSince: Duration?

    var counts: Counts { recorded.withLock { $0 } }

    init(
        connection: SQLiteConnection, clock: any MonotonicClock = SystemMonotonicClock(), phoneSeal: PhoneSealSlot = PhoneSealSlot(),
        checkpointer: WALCheckpointer? = nil
    ) {
        self.connection = connection
        self.checkpointer = checkpointer
        self.phoneSeal = phoneSeal
        self.clock = clock
        pending = BatchQueue(consumers: 1, clock: clock)
        Thread.start(named: "store-writer") { [self] in run() }
    }

    /// Runs `body` in the next batch and waits for the batch to be durable (unless `syncingLater`).
    func submit<T: Sendable>(syncingLater: Bool, _ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try AnswerSlot<T, any Error>.waiting(missing: StoreError.unavailable("the writer produced no result")) { done in
            queue(syncingLater: syncingLater, body, done: done)
        }
    }

    /// Runs `body` in the next batch without waiting for it: `done` is called on the writer thread
    /// with what `body` returned once the batch is committed (durable, unless `syncingLater`), or
    /// with the error (`body`'s, the commit's, or `unavailable` once the writer is closed).
    ///
    /// A `gathering` write may wait up to ``gatheringWait`` for other gathering writes, so that
    /// they share one commit: for callers that do not wait for it right away (the outbox's outcome
    /// records). Alone, each was a commit of its own that wrote its pages again (6 pages, 24 KB of
    /// WAL, per delivered message). Any other write ends the wait.
    func queue<T: Sendable>(
        syncingLater: Bool, gathering: Bool = false, _ body: @escaping @Sendable (any StoreWriter) throws -> T,
        done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let outcome = QueuedOutcome<T>()
        let work = PendingWrite(syncingLater: syncingLater, gathering: gathering, run: { writer in
            do {
                outcome.result = .success(try body(writer))
                return true
            } catch {
                outcome.result = .failure(error)
                return false
            }
        }, fail: { error in outcome.result = .failure(error) }, signal: {
            done(outcome.result ?? .failure(StoreError.unavailable("the writer produced no result")))
        })
        // A gathering write does not wake a writer that is gathering short of its batch: it is taken
        // at the gathering deadline with the others.
        if !pending.append(work, urgent: !gathering) { done(.failure(StoreError.unavailable("the store is closed"))) }
    }

    /// Refuses new writes, commits those already queued, flushes what was committed without
    /// fsync, and ends the writer thread. Returns when all that is done.
    func close() {
        pending.close()
        _ = pending.waitForConsumers()
    }

    private func run() {
        while true {
            switch pending.take(upTo: SQLiteStore.maximumBatch, until: unsyncedSince.map { $0 + Self.syncInterval }) {
            case .items(let batch):
                commit(gathered(batch))
            case .timedOut:
                flush()
            case .closed:
                if unsyncedSince != nil { flush() }
                pending.consumerEnded()
                return
            }
        }
    }

    /// `batch` with the writes that join it while it waits, when it is all gathering writes: until
    /// ``gatheringBatch`` of them, ``gatheringWait`` after it was taken, or a write that is not one.
    /// The writer sleeps through the wait: the gathering writes that join it do not wake it one by
    /// one (``BatchQueue/gather(upTo:until:quorum:)``); each had, a switch of the writer per
    /// delivered message.
    private func gathered(_ batch: [PendingWrite]) -> [PendingWrite] {
        guard batch.count < Self.gatheringBatch, batch.allSatisfy(\.gathering) else { return batch }
        var batch = batch
        let deadline = clock.now() + Self.gatheringWait
        while batch.count < Self.gatheringBatch,
            case .items(let more) = pending.gather(
                upTo: SQLiteStore.maximumBatch - batch.count, until: deadline, quorum: Self.gatheringBatch - batch.count)
        {
            batch += more
            guard more.allSatisfy(\.gathering) else { break }
        }
        return batch
    }

    /// Flushes commits made without fsync: a passive checkpoint fsyncs the WAL before it copies it.
    private func flush() {
        do {
            try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            unsyncedSince = nil
            recorded.withLock { $0.flushes += 1 }
        } catch {
            // Busy (another checkpoint runs: the store's ``WALCheckpointer`` or another process):
            // tried again in a few milliseconds, or the next commit is a full one.
            unsyncedSince = clock.now() - Self.syncInterval + Self.busyFlushRetry
        }
    }

    /// Whether the next commit may skip its fsync: every closure allows it and the oldest unflushed
    /// commit is younger than `syncInterval`. Sets `synchronous` to match (FULL flushes the older
    /// commits too); if that fails the connection keeps its mode, and `commit` flushes after a
    /// commit that needed the fsync but was made without it.
    private func chooseSync(for batch: [PendingWrite]) -> Bool {
        var later = batch.allSatisfy(\.syncingLater)
        if later, let since = unsyncedSince, clock.now() - since >= Self.syncInterval { later = false }
        if later != relaxed {
            if (try? connection.execute(later ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL")) != nil {
                relaxed = later
            }
        }
        return later
    }

    private func commit(_ batch: [PendingWrite]) {
        let transaction = SQLStoreTransaction(connection, phoneSeal: phoneSeal.current)
        let later = chooseSync(for: batch)
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            let failure = StoreError.unavailable((error as? SQLiteError)?.description ?? "\(error)")
            for work in batch {
                work.fail(failure)
                work.signal()
            }
            return
        }
        var succeeded: [PendingWrite] = []
        var queuedMail = false
        for work in batch {
            do {
                try connection.execute("SAVEPOINT write")
                transaction.queuedMail = false
                if work.run(transaction) {
                    try connection.execute("RELEASE write")
                    succeeded.append(work)
                    queuedMail = queuedMail || transaction.queuedMail
                } else {
                    try connection.execute("ROLLBACK TO write")
                    try connection.execute("RELEASE write")
                }
            } catch {
                work.fail(StoreError.unavailable((error as? SQLiteError)?.description ?? "\(error)"))
            }
        }
        do {
            try connection.execute("COMMIT")
            if relaxed {
                if unsyncedSince == nil { unsyncedSince = clock.now() }
            } else {
                unsyncedSince = nil
            }
            let relaxed = relaxed
            recorded.withLock { if relaxed { $0.deferred += 1 } else { $0.synced += 1 } }
            checkpointer?.noteCommit(on: connection)
            // Needed the fsync but the mode could not be switched: flush now.
            if !later && relaxed { flush() }
            // Committed (and durable, unless every closure allowed later): wake the workers once.
            if queuedMail { doorbell.ring() }
        } catch {
            _ = try? connection.execute("ROLLBACK")
            let failure = StoreError.unavailable((error as? SQLiteError)?.description ?? "\(error)")
            for work in succeeded { work.fail(failure) }
        }
        for work in batch { work.signal() }
    }
}

/// A caller's closure, type-erased for the queue.
private struct PendingWrite: Sendable {
    /// The caller allows a commit without fsync (``SQLiteStore/writeSyncingLater(_:)``).
    let syncingLater: Bool
    /// The commit may wait a moment for other writes like it (``GroupCommitWriter/gatheringWait``).
    let gathering: Bool
    /// Runs the closure; true when it succeeded (its result is stored in its slot).
    let run: @Sendable (SQLStoreTransaction) -> Bool
    /// Replaces the result with a failure (the commit failed).
    let fail: @Sendable (any Error) -> Void
    /// Wakes the caller.
    let signal: @Sendable () -> Void
}

/// What a queued write came to: its closure's value, or its error or the commit's. `@unchecked
/// Sendable`: only the writer thread touches it (its closure runs, fails and signals there).
private final class QueuedOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
