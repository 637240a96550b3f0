import Foundation
import PosternCore
import Synchronization

/// The daemon's long-lived parts (delivery workers, housekeeping, listeners) as one group: each
/// starts in the order it was added; they stop in reverse order, each once, whether the group is
/// stopped by a signal, by a later part failing to start, or twice by mistake. `postern serve`
/// spells its lifecycle as a list of parts instead of repeating the stop sequence at every exit.
public final class ServiceGroup: Sendable {
    private struct Started {
        let name: String
        let stop: @Sendable () -> Void
    }

    /// The parts started so far, in order; emptied by the first ``stop()``.
    private let started = Mutex<[Started]>([])
    private let logger: Logger?

    /// An empty group; `logger` (when given) gets a debug line per part started and stopped.
    public init(logger: Logger? = nil) { self.logger = logger }

    /// Starts `name` with `start` and remembers `stop` for the group's stop. A start that throws
    /// stops every part started before it, in reverse, and rethrows.
    /// - Throws: what `start` throws.
    public func start<Failure: Error>(
        _ name: String, _ start: () throws(Failure) -> Void, stop: @escaping @Sendable () -> Void
    ) throws(Failure) {
        do {
            try start()
        } catch {
            logger?.info("service failed to start: stopping the others", ["service": name])
            self.stop()
            throw error
        }
        started.withLock { $0.append(Started(name: name, stop: stop)) }
        logger?.log(.debug, "service started", ["service": name])
    }

    /// Stops every started part in reverse order of starting; the second and later calls do
    /// nothing (a part is never stopped twice).
    public func stop() {
        let parts = started.withLock { parts -> [Started] in
            defer { parts.removeAll() }
            return parts
        }
        for part in parts.reversed() {
            part.stop()
            logger?.log(.debug, "service stopped", ["service": part.name])
        }
    }

    /// The names of the parts running now, in the order they started.
    public var running: [String] { started.withLock { $0.map(\.name) } }
}
