import Foundation

/// Threads that answer the requests which wait for a store commit, so that libmicrohttpd's few
/// polling threads never block. libmicrohttpd hands a burst of new connections to one polling
/// thread in groups, so a polling thread blocked in a commit stalls every connection it holds;
/// a group commit then gathers only the few requests whose threads happen to be free (about 7
/// of 64 here). With the connection suspended and its request queued here, every waiting
/// request can join the same commit.
///
/// `@unchecked Sendable`: `jobs`, `running` and `closed` are only touched with `condition` locked.
final class RequestWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var running = 0
    private var closed = false

    /// Starts `count` threads.
    init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in work() }
            thread.name = "postern-http-\(index)"
            thread.start()
        }
    }

    /// Queues `job`. False once closed: the caller then runs it itself.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Refuses new jobs, waits for the queued and running ones, and lets the threads end.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !jobs.isEmpty || running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty && !closed { condition.wait() }
            if jobs.isEmpty { break }
            let job = jobs.removeFirst()
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
            // close() waits on the same condition for the last job to finish.
            if closed && jobs.isEmpty && running == 0 { condition.broadcast() }
        }
        condition.unlock()
    }
}
