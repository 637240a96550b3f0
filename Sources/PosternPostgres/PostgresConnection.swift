internal import CLibPQ
import PosternSQL
import Synchronization

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// One libpq connection (`PGconn`), used by one thread at a time as libpq requires; caches its
/// prepared statements. A connection that broke is thrown away, never repaired: its replacement
/// starts with an empty cache, so every statement is prepared again on it.
final class PostgresConnection {
    private let handle: OpaquePointer
    private let connectionString: PostgresConnectionString
    /// SQL as the store writes it (`?` placeholders) → the server-side statement's name.
    private var prepared: [String: String] = [:]

    /// Connects; `application_name` is postern unless the string sets one, and a TCP connect
    /// gives up after 10 s unless it sets `connect_timeout`.
    /// - Throws: `PostgresError` (connection lost) with libpq's message, the password scrubbed.
    init(_ connectionString: PostgresConnectionString) throws {
        self.connectionString = connectionString
        // Later keywords override earlier ones, and `dbname` expands to the whole string: the
        // defaults go first, the operator's string after them.
        let keywords = ["connect_timeout", "dbname", "fallback_application_name"]
        let values = ["10", connectionString.text, "postern"]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else {
            throw PostgresError(sqlState: nil, message: "out of memory", constraint: nil, sql: nil, connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = connectionString.scrub(Self.trimmed(PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: message, constraint: nil, sql: nil, connectionLost: true)
        }
        postern_pq_silence_notices(connection)
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Set when a pipeline could not be ended cleanly: the connection's state is unknown.
    private var broken = false

    /// False once the socket is closed, the server ended the session, or a pipeline broke.
    var isUsable: Bool { !broken && PQstatus(handle) == CONNECTION_OK }

    /// Round trips to the server so far: each wait for an answer (for tests and the benchmark).
    private(set) var roundTrips = 0
    /// Where the pool's connections count their round trips together (``PostgresStore/serverRoundTrips``).
    var sharedCount: RoundTripCount?

    /// Counts one wait for the server's answer.
    private func countRoundTrip() {
        roundTrips += 1
        sharedCount?.add()
    }

    /// How many statements this connection has prepared (for tests of the re-preparation).
    var preparedCount: Int { prepared.count }

    /// The server process serving this connection (for tests that end it).
    var backendPID: Int32 { PQbackendPID(handle) }

    /// The socket libpq reads from (for a wait on a LISTEN connection); -1 when closed.
    var socket: Int32 { PQsocket(handle) }

    /// Reads what the server sent without waiting; false when the connection broke.
    func consumeInput() -> Bool { PQconsumeInput(handle) == 1 && isUsable }

    /// Takes the notifications read so far; counts those another session sent (a session that
    /// listens hears its own NOTIFY too).
    func takeNotifications() -> Int {
        let own = PQbackendPID(handle)
        var count = 0
        while let notification = PQnotifies(handle) {
            if notification.pointee.be_pid != own { count += 1 }
            PQfreemem(notification)
        }
        return count
    }

    /// The first column of the first row of a simple query, as text (nil for none or NULL).
    func scalarText(_ sql: String) throws -> String? {
        countRoundTrip()
        let result = PostgresResult(PQexec(handle, sql))
        try check(result, sql: sql)
        guard let pointer = result.pointer, PQntuples(pointer) > 0, PQgetisnull(pointer, 0, 0) == 0,
            let value = PQgetvalue(pointer, 0, 0)
        else { return nil }
        return String(cString: value)
    }

    /// Runs `sql` with the simple protocol: no parameters, several statements allowed, text results.
    func executeSimple(_ sql: String) throws {
        countRoundTrip()
        let result = PostgresResult(PQexec(handle, sql))
        try check(result, sql: sql)
    }

    /// The command tag of the last simple statement (`COMMIT`, or `ROLLBACK` when a COMMIT found
    /// the transaction aborted).
    func commit() throws -> Bool {
        countRoundTrip()
        let result = PostgresResult(PQexec(handle, "COMMIT"))
        try check(result, sql: "COMMIT")
        return result.commandStatus == "COMMIT"
    }

    /// Runs a statement with `?` placeholders as a prepared statement (preparing it on first use),
    /// the arguments as text or, for bytes, binary; the results in binary.
    func run(_ sql: String, _ args: [SQLValue]) throws -> PostgresResult {
        let name = try statementName(for: sql, parameters: args.count)
        countRoundTrip()
        let result = withParameters(args) { raw, lengths, formats in
            PostgresResult(PQexecPrepared(handle, name, Int32(args.count), raw, lengths, formats, 1))
        }
        try check(result, sql: sql)
        return result
    }

    /// One statement of a ``pipeline(_:)``: parameterless text run as it is (`BEGIN …`, `SET
    /// LOCAL …`, `COMMIT`), or a statement with `?` placeholders run prepared, as ``run(_:_:)`` does.
    struct Pipelined {
        let sql: String
        let args: [SQLValue]
        let prepared: Bool

        /// Parameterless text.
        static func text(_ sql: String) -> Pipelined { Pipelined(sql: sql, args: [], prepared: false) }
        /// A prepared statement with its arguments.
        static func prepared(_ sql: String, _ args: [SQLValue]) -> Pipelined { Pipelined(sql: sql, args: args, prepared: true) }
    }

    /// Runs `statements` in one round trip (libpq's pipeline mode): a transaction's start, the
    /// writes whose answers nobody waits for, and the statement that is waited for (or COMMIT)
    /// cost one wait. Each result is checked in order and the first failure thrown: the server ran
    /// none after it (an aborted transaction), so the failure names the statement that caused it.
    func pipeline(_ statements: [Pipelined]) throws -> [PostgresResult] {
        // Prepared first, on their own (once per connection): PQprepare is not for pipelines.
        var names: [String?] = []
        for statement in statements {
            names.append(statement.prepared ? try statementName(for: statement.sql, parameters: statement.args.count) : nil)
        }
        guard statements.count > 1, PQenterPipelineMode(handle) == 1 else {
            return try zip(statements, names).map { statement, name in
                guard name != nil else {
                    countRoundTrip()
                    let result = PostgresResult(PQexec(handle, statement.sql))
                    try check(result, sql: statement.sql)
                    return result
                }
                return try run(statement.sql, statement.args)
            }
        }
        var sent = 0
        for (statement, name) in zip(statements, names) {
            let queued: Bool
            if let name {
                queued = withParameters(statement.args) { raw, lengths, formats in
                    PQsendQueryPrepared(handle, name, Int32(statement.args.count), raw, lengths, formats, 1) == 1
                }
            } else {
                queued = PQsendQueryParams(handle, statement.sql, 0, nil, nil, nil, nil, 0) == 1
            }
            guard queued else { break }
            sent += 1
        }
        let synced = PQpipelineSync(handle) == 1
        countRoundTrip()
        // Each query's results end with a NULL; then the sync point.
        var results: [PostgresResult] = []
        for _ in 0..<sent {
            var first: PostgresResult?
            while let pointer = PQgetResult(handle) {
                if first == nil { first = PostgresResult(pointer) } else { PQclear(pointer) }
            }
            results.append(first ?? PostgresResult(nil))
        }
        if synced {
            while let pointer = PQgetResult(handle) {
                let status = PQresultStatus(pointer)
                PQclear(pointer)
                if status == PGRES_PIPELINE_SYNC { break }
            }
        }
        if PQexitPipelineMode(handle) != 1 { broken = true }
        guard sent == statements.count, synced, results.count == statements.count else {
            throw PostgresError(
                sqlState: nil, message: connectionString.scrub(Self.trimmed(PQerrorMessage(handle))), constraint: nil,
                sql: statements[min(sent, statements.count - 1)].sql, connectionLost: true)
        }
        for (statement, result) in zip(statements, results) { try check(result, sql: statement.sql) }
        return results
    }

    /// The arguments as libpq takes them: text, or binary for bytes; NULL as a null pointer.
    private func withParameters<R>(
        _ args: [SQLValue], _ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) -> R
    ) -> R {
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        defer { for buffer in buffers { buffer?.deallocate() } }
        for value in args {
            let bytes: [UInt8]?
            switch value {
            case .integer(let v): bytes = Array(String(v).utf8)
            case .text(let v): bytes = Array(v.utf8)
            case .blob(let v): bytes = v
            case .null: bytes = nil
            }
            guard let bytes else {
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
                continue
            }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBufferPointer { source in
                for index in 0..<bytes.count { buffer[index] = CChar(bitPattern: source[index]) }
            }
            buffer[bytes.count] = 0
            buffers.append(buffer)
            lengths.append(Int32(bytes.count))
            if case .blob = value { formats.append(1) } else { formats.append(0) }
        }
        return body(buffers.map { UnsafePointer($0) }, lengths, formats)
    }

    private func statementName(for sql: String, parameters: Int) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "postern_\(prepared.count + 1)"
        countRoundTrip()
        let result = PostgresResult(PQprepare(handle, name, Self.numberedPlaceholders(sql), 0, nil))
        try check(result, sql: sql)
        prepared[sql] = name
        return name
    }

    /// `?` → `$1`, `$2`, … outside quoted literals and identifiers.
    static func numberedPlaceholders(_ sql: String) -> String {
        var out = ""
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                out.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                out.append(character)
            } else if character == "?" {
                number += 1
                out += "$\(number)"
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The one error funnel: throws unless `result` says the statement succeeded.
    private func check(_ result: PostgresResult, sql: String) throws {
        switch result.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default: break
        }
        let lost = !isUsable
        guard result.pointer != nil else {
            throw PostgresError(
                sqlState: nil, message: connectionString.scrub(Self.trimmed(PQerrorMessage(handle))), constraint: nil, sql: sql,
                connectionLost: lost)
        }
        let primary = result.field(postern_pq_diag_message_primary()) ?? Self.trimmed(PQerrorMessage(handle))
        throw PostgresError(
            sqlState: result.field(postern_pq_diag_sqlstate()), message: connectionString.scrub(primary),
            constraint: result.field(postern_pq_diag_constraint_name()), sql: sql, connectionLost: lost)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq error" }
        var text = String(cString: message)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text.isEmpty ? "unknown libpq error" : text
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }
}

@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// The round trips of every connection of a pool, together.
final class RoundTripCount: Sendable {
    private let total = Atomic<Int>(0)

    /// Counts one.
    func add() { total.add(1, ordering: .relaxed) }

    /// The count so far.
    var value: Int { total.load(ordering: .relaxed) }
}

/// One `PGresult`, cleared when the last reference goes. Rows are read in binary by type.
final class PostgresResult {
    let pointer: OpaquePointer?

    init(_ pointer: OpaquePointer?) { self.pointer = pointer }

    deinit { if let pointer { PQclear(pointer) } }

    var status: ExecStatusType { pointer.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR }

    /// Rows changed by an INSERT, UPDATE or DELETE (`PQcmdTuples`); 0 for other statements.
    var changedRows: Int {
        guard let pointer, let text = PQcmdTuples(pointer) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    var commandStatus: String {
        guard let pointer, let text = PQcmdStatus(pointer) else { return "" }
        return String(cString: text)
    }

    var rowCount: Int32 { pointer.map { PQntuples($0) } ?? 0 }

    func field(_ code: Int32) -> String? {
        guard let pointer, let value = PQresultErrorField(pointer, code) else { return nil }
        return String(cString: value)
    }
}

@available(*, unavailable)
extension PostgresResult: Sendable {}

/// One row of a binary-format result.
struct PostgresRow: SQLRow {
    let result: PostgresResult
    let row: Int32

    // Type OIDs (pg_type.h): the ones the schema uses.
    private static let bool: UInt32 = 16, bytea: UInt32 = 17, int8: UInt32 = 20, int2: UInt32 = 21, int4: UInt32 = 23

    private func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
        guard let pointer = result.pointer, column < PQnfields(pointer), PQgetisnull(pointer, row, column) == 0,
            let value = PQgetvalue(pointer, row, column)
        else { return nil }
        return UnsafeRawBufferPointer(start: value, count: Int(PQgetlength(pointer, row, column)))
    }

    func isNull(_ column: Int32) -> Bool { bytes(column) == nil }

    func integer(_ column: Int32) -> Int64 {
        guard let pointer = result.pointer, let bytes = bytes(column) else { return 0 }
        let type = PQftype(pointer, column)
        let width: Int
        switch type {
        case Self.bool: return bytes.first.map { $0 != 0 ? 1 : 0 } ?? 0
        case Self.int2: width = 2
        case Self.int4: width = 4
        case Self.int8: width = 8
        default: return 0
        }
        guard bytes.count == width else { return 0 }
        // Big-endian two's complement, sign-extended from its width.
        var value: Int64 = bytes[0] & 0x80 != 0 ? -1 : 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    func text(_ column: Int32) -> String? {
        bytes(column).map { String(decoding: $0, as: UTF8.self) }
    }

    func blob(_ column: Int32) -> [UInt8]? {
        bytes(column).map { Array($0) }
    }
}
