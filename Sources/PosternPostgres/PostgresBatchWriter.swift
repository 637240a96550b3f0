import Foundation
import PosternCore

/// Threads that commit queued writes (``PostgresStore/queueWrite(syncingLater:gathering:_:done:)``)
/// in batches: each takes what waits, up to ``maximumBatch``, and commits it in one transaction on
/// one connection (``PostgresTransactions/commit(_:)``). Many requests' writes then share one
/// BEGIN, one COMMIT and one WAL flush, and no request thread holds a connection while it waits
/// for its commit.
///
/// Fewer threads than the pool has connections, so reads and the writes that run alone always
/// find one.
final class PostgresBatchWriter: Sendable {
    /// Most closures in one transaction: each that writes takes a subtransaction id, and a
    /// server process caches 64 of them (more slow every other session's snapshots).
    static let maximumBatch = 32

    private let pending: BatchQueue<BatchedWrite>
    let threads: Int

    /// Starts `threads` writer threads committing through `transactions`.
    init(transactions: PostgresTransactions, threads: Int) {
        self.threads = max(1, threads)
        pending = BatchQueue(consumers: self.threads)
        for index in 0..<self.threads {
            Thread.start(named: "pg-writer-\(index)") { [pending] in
                while case .items(let batch) = pending.take(upTo: Self.maximumBatch) {
                    // The outcome records apart: a batch that began READ COMMITTED with one and
                    // then met a request's write ran again SERIALIZABLE from the start.
                    let records = batch.filter(\.gathering)
                    if !records.isEmpty { transactions.commit(records) }
                    if records.count < batch.count { transactions.commit(batch.filter { !$0.gathering }) }
                }
                pending.consumerEnded()
            }
        }
    }

    /// The threads a pool of `connections` gets: half of them, at least one.
    static func threads(forConnections connections: Int) -> Int { max(1, connections / 2) }

    /// Queues `write`; false once closed (nothing queued).
    func queue(_ write: BatchedWrite) -> Bool {
        pending.append(write)
    }

    /// Refuses new writes, commits those already queued, and ends the threads; returns when that
    /// is done, unless `waiting` is false (the store's `deinit`, which may run on a writer thread
    /// that let go of the last reference: it must not wait for itself).
    func close(waiting: Bool = true) {
        pending.close()
        if waiting { _ = pending.waitForConsumers() }
    }
}
