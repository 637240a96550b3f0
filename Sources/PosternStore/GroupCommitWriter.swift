import Foundation
import PosternCore

/// One writer thread that commits waiting closures in batches: one fsync for many callers.
///
/// `@unchecked Sendable`: `pending` and `stopped` are only touched with `condition` locked; the
/// connection is only touched by the writer thread.
final class GroupCommitWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [PendingWrite] = []
    private let connection: SQLiteConnection

    init(connection: SQLiteConnection) {
        self.connection = connection
        let thread = Thread { [self] in run() }
        thread.name = "postern-store-writer"
        thread.start()
    }

    /// Runs `body` in the next batch and waits for the batch to be durable.
    func submit<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        do {
            let slot = ResultSlot<T>()
            let work = PendingWrite(run: { writer in
                do {
                    slot.value = .success(try body(writer))
                    return true
                } catch {
                    slot.value = .failure(error)
                    return false
                }
            }, fail: { error in slot.value = .failure(error) }, signal: slot.signal)
            condition.lock()
            pending.append(work)
            condition.signal()
            condition.unlock()
            return try slot.wait()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            let batch = Array(pending.prefix(SQLiteStore.maximumBatch))
            pending.removeFirst(batch.count)
            condition.unlock()
            commit(batch)
        }
    }

    private func commit(_ batch: [PendingWrite]) {
        let transaction = SQLiteTransaction(connection)
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
        for work in batch {
            do {
                try connection.execute("SAVEPOINT write")
                if work.run(transaction) {
                    try connection.execute("RELEASE write")
                    succeeded.append(work)
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
        } catch {
            _ = try? connection.execute("ROLLBACK")
            let failure = StoreError.unavailable((error as? SQLiteError)?.description ?? "\(error)")
            for work in succeeded { work.fail(failure) }
        }
        for work in batch { work.signal() }
    }
}

/// A caller's closure, type-erased for the queue.
private struct PendingWrite {
    /// Runs the closure; true when it succeeded (its result is stored in its slot).
    let run: (SQLiteTransaction) -> Bool
    /// Replaces the result with a failure (the commit failed).
    let fail: (any Error) -> Void
    /// Wakes the caller.
    let signal: () -> Void
}

/// Where the writer thread leaves one caller's result. `@unchecked Sendable`: `value` is written by
/// the writer thread before `signal()` and read by the caller after `wait()` returns; the semaphore
/// orders the two.
private final class ResultSlot<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }

    func wait() throws -> T {
        semaphore.wait()
        guard let value else { throw StoreError.unavailable("the writer produced no result") }
        return try value.get()
    }
}
