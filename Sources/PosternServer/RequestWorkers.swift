import Foundation
import PosternCore

/// Threads that answer the requests which wait for a store commit, so that libmicrohttpd's few
/// polling threads never block. libmicrohttpd hands a burst of new connections to one polling
/// thread in groups, so a polling thread blocked in a commit stalls every connection it holds;
/// a group commit then gathers only the few requests whose threads happen to be free (about 7
/// of 64 here). With the connection suspended and its request queued here, every waiting
/// request can join the same commit.
final class RequestWorkers: Sendable {
    /// The queued jobs; each thread is one of its consumers and takes one job at a time, so a
    /// slow job never holds back the others.
    private let jobs: BatchQueue<@Sendable () -> Void>

    /// Starts `count` threads.
    init(count: Int) {
        jobs = BatchQueue(consumers: count)
        for index in 0..<count {
            Thread.start(named: "http-\(index)") { [self] in work() }
        }
    }

    /// Queues `job`. False once closed: the caller then runs it itself.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        jobs.append(job)
    }

    /// Refuses new jobs, waits for the queued and running ones, and lets the threads end.
    func close() {
        jobs.close()
        _ = jobs.waitForConsumers()
    }

    private func work() {
        while case .items(let batch) = jobs.take(upTo: 1) {
            for job in batch { job() }
        }
        jobs.consumerEnded()
    }
}
