import Foundation

/// How many connections one daemon can hold, from its file-descriptor limit.
///
/// Every connection is a descriptor. With libmicrohttpd's limit above what the process may open,
/// `accept` fails with EMFILE while the listener stays readable, and every client — the health
/// check too — waits; below it, the excess is refused at once and everything else still works.
public enum ConnectionBudget {
    /// The most connections in any case: each can hold `HTTPServer.connectionMemory` (32 KiB)
    /// once it has carried a request, so 16,384 bound that memory at 512 MiB.
    public static let ceiling = 16_384

    /// Descriptors kept for everything that is not a client connection: SQLite (a writer and up
    /// to 16 readers, each a database, WAL and shared-memory file), the key and template files,
    /// the files of the `file:` transport, standard streams, the listeners, and slack.
    public static let reservedBase = 256

    /// The connection limit for `fileDescriptors`, leaving the reserve, 4 per SMTP delivery worker
    /// (its socket, a resolver, a CA file, slack) and 4 per polling thread (epoll and wake-up
    /// descriptors of two listeners).
    public static func connections(fileDescriptors: Int, deliveryWorkers: Int, pollingThreads: Int) -> Int {
        let reserved = reservedBase + 4 * deliveryWorkers + 4 * pollingThreads
        return min(max(fileDescriptors - reserved, 16), ceiling)
    }

    /// Raises this process's soft RLIMIT_NOFILE to its hard limit (capped at the kernel's
    /// `nr_open`, as an unlimited hard limit cannot be set) and returns the soft limit in force
    /// afterwards, and the one before.
    public static func raiseFileDescriptorLimit() -> (limit: Int, before: Int) {
        var limits = rlimit()
        // getrlimit cannot fail for RLIMIT_NOFILE on Linux; should it, assume the usual default.
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return (1024, 1024) }
        let before = limits.rlim_cur
        var target = limits.rlim_max
        if target == rlim_t.max {  // RLIM_INFINITY, which Swift does not import
            let nrOpen = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8))
                .flatMap { rlim_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            target = nrOpen ?? 1 << 20
        }
        if target > before {
            var raised = limits
            raised.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limits = raised }
        }
        return (Int(clamping: limits.rlim_cur), Int(clamping: before))
    }
}
