import Foundation

/// A small pool of connections: each is lent to one thread at a time (libpq's rule), opened on
/// demand up to `size`, and dropped when it broke — the next borrower opens a fresh one.
///
/// A borrower that finds all `size` lent waits; after `overflowAfter` it opens one more rather
/// than wait on: a closure that reads the store inside a write (a key ring reload) holds one
/// connection while it asks for another, and with every connection so held a strict cap would
/// deadlock. The extra connection is closed when given back.
///
/// `@unchecked Sendable`: `idle` and `open` are only touched with `condition` locked; a lent
/// connection belongs to its borrower alone until it is given back.
final class PostgresPool: @unchecked Sendable {
    let size: Int
    private let connectionString: PostgresConnectionString
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private let overflowAfter: TimeInterval
    /// Round trips of every connection this pool opened.
    let roundTrips = RoundTripCount()

    init(_ connectionString: PostgresConnectionString, size: Int, overflowAfter: TimeInterval = 1) {
        self.connectionString = connectionString
        self.size = max(1, size)
        self.overflowAfter = overflowAfter
    }

    /// Connections open now, lent or idle (for tests).
    var openCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return open
    }

    /// The server processes of the idle connections (for tests that end them).
    var idleBackendPIDs: [Int32] {
        condition.lock()
        defer { condition.unlock() }
        return idle.map(\.backendPID)
    }

    /// An idle connection, or a new one.
    /// - Throws: `PostgresError` when a new connection cannot be opened.
    func borrow() throws -> PostgresConnection {
        condition.lock()
        let deadline = Date().addingTimeInterval(overflowAfter)
        while idle.isEmpty && open >= size {
            if !condition.wait(until: deadline) { break }
        }
        if let connection = idle.popLast() {
            condition.unlock()
            if connection.isUsable { return connection }
            drop()
            return try borrow()
        }
        open += 1
        condition.unlock()
        do {
            let connection = try PostgresConnection(connectionString)
            connection.sharedCount = roundTrips
            return connection
        } catch {
            drop()
            throw error
        }
    }

    /// Takes `connection` back; one that broke (or one over the size) is closed.
    func giveBack(_ connection: PostgresConnection) {
        condition.lock()
        defer { condition.unlock() }
        if connection.isUsable && open <= size {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
    }

    /// Closes every idle connection; those lent now are closed as they come back (over the size).
    func drainIdle() {
        condition.lock()
        defer { condition.unlock() }
        open -= idle.count
        idle.removeAll()
    }

    private func drop() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
