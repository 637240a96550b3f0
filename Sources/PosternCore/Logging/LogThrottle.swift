import Synchronization

/// One log line per key and window: a cap hit by an attack is logged when it is first hit, not at
/// every refusal, which would flood the log. A cache in memory: a daemon that restarts logs again.
final class LogThrottle: Sendable {
    /// Until when each key's line has been written (the end of the window it was written in).
    private let loggedUntil = Mutex<[String: Int64]>([:])

    init() {}

    /// Runs `write` with `logger` unless `key`'s line was written for a window that has not ended
    /// by `end`.
    func once(_ key: String, until end: Int64, logger: Logger?, _ write: (Logger) -> Void) {
        guard let logger else { return }
        let first = loggedUntil.withLock { logged -> Bool in
            guard logged[key].map({ end > $0 }) ?? true else { return false }
            logged[key] = end
            return true
        }
        if first { write(logger) }
    }
}
