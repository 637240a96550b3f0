import Foundation
import PosternCore
import Synchronization

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Wake-ups between the daemons on one database: LISTEN/NOTIFY on a connection of its own (never
/// the pool's, whose connections run transactions), so that mail one daemon queues wakes the
/// others' outbox workers at once instead of at their next poll. Polling stays the fallback: the
/// workers still look every poll interval, so a lost notification only costs that wait.
///
/// - Hearing: a notification another session sent rings the store's doorbell with
///   ``MailDoorbell/Origin/anotherProcess``.
/// - Telling: each commit of this process that queued mail (the doorbell's
///   ``MailDoorbell/listenToThisProcess(_:)``) asks for one `pg_notify`; the channel's thread sends
///   at most one per `throttle` seconds, however many commits asked, outside every request's
///   transaction (a NOTIFY inside a transaction takes a database-wide lock at its commit, which
///   would serialize the requests' commits).
/// - A connection that breaks (the server restarted, `pg_terminate_backend`) is replaced after a
///   pause, LISTENs again, and then rings the doorbell once: what was announced meanwhile was
///   missed.
///
/// The channel is per schema (`postern_mail_` and a hash of `current_schema()`), so two
/// installations in one database (as the tests run) do not wake each other.
///
/// `@unchecked Sendable`: the connection is touched by the channel's thread alone; the rest is
/// atomics and a lock.
final class PostgresMailChannel: @unchecked Sendable {
    private let connectionString: PostgresConnectionString
    private let doorbell: MailDoorbell
    private let throttle: Double
    private let reconnectPause: Double
    private let stopped = Atomic<Bool>(false)
    private let pending = Atomic<Bool>(false)
    private let finished = NSCondition()
    private var threadDone = false
    /// How many times a LISTEN took effect (1 after the start, 2 after one reconnect, …).
    let listens = Atomic<Int>(0)
    /// NOTIFYs sent.
    let sent = Atomic<Int>(0)
    /// Notifications from other sessions heard.
    let heard = Atomic<Int>(0)
    /// The server process of the LISTEN connection (0 while there is none), for tests that end it.
    let backendPID = Atomic<Int32>(0)
    /// The thread's connection.
    private var connection: PostgresConnection?
    private var channel = ""
    /// A pipe whose read end the thread's wait watches beside the socket: a byte written by
    /// ``announce()`` or ``stop()`` ends the wait at once.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(_ connectionString: PostgresConnectionString, doorbell: MailDoorbell, throttle: Double = 0.05, reconnectPause: Double = 1) {
        self.connectionString = connectionString
        self.doorbell = doorbell
        self.throttle = throttle
        self.reconnectPause = reconnectPause
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// Asks for a NOTIFY (a commit of this process queued mail): sent at once, or when the
    /// throttle allows.
    func announce() {
        pending.store(true, ordering: .releasing)
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Starts the thread and listens to this process's commits.
    func start() {
        doorbell.listenToThisProcess { [weak self] in self?.announce() }
        Thread.start(named: "pg-notify") { [self] in run() }
    }

    /// Sends what is still to be announced, then stops the thread and waits for it.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake()
        finished.lock()
        let deadline = Date().addingTimeInterval(5)
        while !threadDone { if !finished.wait(until: deadline) { break } }
        finished.unlock()
    }

    private func run() {
        var lastSent = 0.0
        while true {
            let stopping = stopped.load(ordering: .acquiring)
            if connection == nil {
                if stopping { break }
                if !connect() {
                    Thread.sleep(forTimeInterval: reconnectPause)
                    continue
                }
            }
            let now = ProcessInfo.processInfo.systemUptime
            if pending.load(ordering: .acquiring) && (now - lastSent >= throttle || stopping) {
                pending.store(false, ordering: .releasing)
                do {
                    try connection?.executeSimple("SELECT pg_notify('\(channel)', '')")
                    sent.add(1, ordering: .relaxed)
                    lastSent = now
                } catch {
                    pending.store(true, ordering: .releasing)
                    drop()
                    continue
                }
            }
            if stopping { break }
            guard let connection else { continue }
            // Until the server sends, a byte comes down the pipe, or the throttle lets a waiting
            // NOTIFY go.
            var timeout: Int32 = 1000
            if pending.load(ordering: .acquiring) {
                timeout = Int32(max(1, ((throttle - (ProcessInfo.processInfo.systemUptime - lastSent)) * 1000).rounded(.up)))
            }
            var descriptors = [
                pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&descriptors, 2, timeout)
            if descriptors[1].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &bytes, bytes.count) > 0 {}
            }
            guard connection.consumeInput() else {
                drop()
                continue
            }
            let count = connection.takeNotifications()
            if count > 0 {
                heard.add(count, ordering: .relaxed)
                doorbell.ring(from: .anotherProcess)
            }
        }
        connection = nil
        backendPID.store(0, ordering: .relaxed)
        finished.lock()
        threadDone = true
        finished.broadcast()
        finished.unlock()
    }

    /// Opens the connection and LISTENs; false when the server cannot be reached now.
    private func connect() -> Bool {
        do {
            let opened = try PostgresConnection(connectionString)
            guard let name = try opened.scalarText("SELECT 'postern_mail_' || left(md5(current_schema()), 16)") else { return false }
            try opened.executeSimple("LISTEN \(name)")
            channel = name
            connection = opened
            backendPID.store(opened.backendPID, ordering: .relaxed)
            // Listening again after a loss: whatever was announced meanwhile was not heard.
            if listens.add(1, ordering: .relaxed).newValue > 1 { doorbell.ring(from: .anotherProcess) }
            return true
        } catch {
            return false
        }
    }

    private func drop() {
        connection = nil
        backendPID.store(0, ordering: .relaxed)
    }
}
