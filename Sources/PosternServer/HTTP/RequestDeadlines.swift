import Foundation
import Synchronization

/// One connection's deadline: the uptime (ns) by which its current request must have arrived
/// whole (headers and body), or 0 while a request is being answered. Written by the polling
/// thread that serves the connection, read by the watchdog.
final class ConnectionDeadline: Sendable {
    /// The connection's socket; only shut down under `RequestDeadlines`' lock (see there).
    let socket: Int32
    private let due: Atomic<UInt64>

    init(socket: Int32, due: UInt64) {
        self.socket = socket
        self.due = Atomic(due)
    }

    /// A new request may start: it must be complete by `now + timeout`.
    func awaitRequest(now: UInt64, timeout: UInt64) { due.store(now &+ timeout, ordering: .relaxed) }

    /// The request is complete; answering it takes no deadline.
    func answering() { due.store(0, ordering: .relaxed) }

    /// Whether the request is late at `now`; a late one is reported once.
    func takeOverdue(at now: UInt64) -> Bool {
        let value = due.load(ordering: .relaxed)
        guard value != 0, now >= value else { return false }
        return due.compareExchange(expected: value, desired: 0, ordering: .relaxed).exchanged
    }
}

/// A deadline for each whole request, not only for silence between bytes: libmicrohttpd 0.9.75's
/// own timeout is an inactivity timeout, so a client sending one header byte every few seconds
/// holds a connection for ever, and about a thousand such clients used every connection.
///
/// How: libmicrohttpd tells us when a connection opens and closes (MHD_OPTION_NOTIFY_CONNECTION);
/// the access handler says when a request has fully arrived, the completion callback when its
/// answer is sent. A request must arrive whole within the timeout of the connection opening or
/// of the previous answer (so an idle keep-alive connection also closes after the timeout). A
/// thread looks four times a second and `shutdown(2)`s the late sockets; libmicrohttpd then
/// sees end-of-file on its next read and closes the connection itself, on its own thread, as if
/// the client had gone.
///
/// Why `shutdown` cannot hit another connection's socket: libmicrohttpd 0.9.75 calls the
/// "closed" notification before it closes the descriptor (`MHD_cleanup_connections` and the
/// failure path of `new_connection_process_` in daemon.c), and the notification removes the
/// connection here under the same lock the watchdog holds while it calls `shutdown`. A
/// descriptor in the table is therefore still that connection's, never a reused number.
/// (The URI-log callback would only say when the request line arrived, and a check in the access
/// handler runs only after the headers are complete — too late for a client that never finishes
/// them.)
final class RequestDeadlines: Sendable {
    /// The deadline, in nanoseconds.
    let timeout: UInt64
    private let open = Mutex<[ObjectIdentifier: ConnectionDeadline]>([:])
    /// Whether the thread was started, and whether it was asked to end.
    private let thread = Mutex((started: false, stopping: false))
    private let finished = DispatchSemaphore(value: 0)

    init(timeoutSeconds: Int) {
        timeout = UInt64(max(timeoutSeconds, 1)) * 1_000_000_000
    }

    /// The monotonic clock the deadlines run on.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A connection opened at `now`: its first request is due by `now + timeout`.
    func opened(socket: Int32, now: UInt64) -> ConnectionDeadline {
        let deadline = ConnectionDeadline(socket: socket, due: now &+ timeout)
        open.withLock { $0[ObjectIdentifier(deadline)] = deadline }
        return deadline
    }

    /// The connection is closing; its socket is still open (see the type's comment).
    func closed(_ deadline: ConnectionDeadline) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(deadline)) }
    }

    /// How many connections are watched.
    var count: Int { open.withLock { $0.count } }

    /// Calls `cut` with the socket of every connection whose request is late at `now`, under the
    /// lock that `closed` takes, and returns how many there were.
    @discardableResult
    func cutOverdue(at now: UInt64, cut: (Int32) -> Void) -> Int {
        open.withLock { table in
            var count = 0
            for deadline in table.values where deadline.takeOverdue(at: now) {
                cut(deadline.socket)
                count += 1
            }
            return count
        }
    }

    /// Starts the watchdog thread; `onCut` hears how many were cut in each round that cut any.
    func start(onCut: @escaping @Sendable (Int) -> Void = { _ in }) {
        guard thread.withLock({ state in
            defer { state.started = true }
            return !state.started && !state.stopping
        }) else { return }
        Thread.start(named: "http-deadlines") { [self] in
            while !thread.withLock({ $0.stopping }) {
                usleep(250_000)
                let count = cutOverdue(at: Self.now()) { socket in _ = shutdown(socket, Int32(SHUT_RDWR)) }
                if count > 0 { onCut(count) }
            }
            finished.signal()
        }
    }

    /// Ends the watchdog thread (after libmicrohttpd has stopped, so no socket is left to cut).
    func stop() {
        let wasRunning = thread.withLock { state in
            defer { state.stopping = true }
            return state.started && !state.stopping
        }
        if wasRunning { finished.wait() }
    }
}
