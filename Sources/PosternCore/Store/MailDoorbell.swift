import Synchronization

/// Rung by a store after each commit that queued mail (or made a dead message due again), once
/// per commit: the outbox workers listen and wake. The one post-commit hook of the store — no
/// flow rings it by hand, so none can forget (a recovery mail queued by a sign-in that linked a
/// new address used to wait for the next poll).
public final class MailDoorbell: Sendable {
    private let listeners = Mutex<[@Sendable () -> Void]>([])

    /// A doorbell nobody listens to yet.
    public init() {}

    /// Calls `listener` after every commit that queued mail, from the committing thread: it must
    /// return at once (a wake-up, not work).
    public func listen(_ listener: @escaping @Sendable () -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Tells every listener. Stores call this after the commit, never inside the transaction.
    public func ring() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }
}
