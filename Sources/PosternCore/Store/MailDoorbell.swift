import Synchronization

/// Rung by a store after each commit that queued mail (or made a dead message due again), once
/// per commit: the outbox workers listen and wake. The one post-commit hook of the store — no
/// flow rings it by hand, so none can forget (a recovery mail queued by a sign-in that linked a
/// new address used to wait for the next poll).
///
/// A store that several daemons share also rings it when another daemon says it queued mail
/// (PostgreSQL: LISTEN/NOTIFY), with ``Origin/anotherProcess``; and it tells the others of this
/// process's commits by listening with ``listenToThisProcess(_:)``, which such rings never reach
/// (so one daemon's announcement is never echoed back and forth).
public final class MailDoorbell: Sendable {
    /// Who queued the mail a ring is for.
    public enum Origin: Sendable {
        /// A commit of this process.
        case thisProcess
        /// Another process on the same database, as the store heard.
        case anotherProcess
    }

    private let listeners = Mutex<[@Sendable () -> Void]>([])
    private let localListeners = Mutex<[@Sendable () -> Void]>([])

    /// A doorbell nobody listens to yet.
    public init() {}

    /// Calls `listener` after every commit that queued mail, this process's or (as the store
    /// heard) another's, from the ringing thread: it must return at once (a wake-up, not work).
    public func listen(_ listener: @escaping @Sendable () -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Calls `listener` after every commit of this process that queued mail, never for a ring from
    /// another process: for the store's announcement to the other daemons. It must return at once.
    public func listenToThisProcess(_ listener: @escaping @Sendable () -> Void) {
        localListeners.withLock { $0.append(listener) }
    }

    /// Tells every listener. Stores call this after the commit, never inside the transaction.
    public func ring(from origin: Origin = .thisProcess) {
        for listener in listeners.withLock({ $0 }) { listener() }
        if origin == .thisProcess {
            for listener in localListeners.withLock({ $0 }) { listener() }
        }
    }
}
