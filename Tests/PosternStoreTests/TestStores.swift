import Foundation
import PosternCore
import PosternCrypto
@testable import PosternPostgres
import PosternSQL
@testable import PosternStore
import Synchronization
import Testing

/// A fresh directory for a database file, a master key file, or both.
struct TemporaryDatabase {
    let directory: URL
    var path: String { directory.appendingPathComponent("postern.db").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
}

/// The stores the store suites run against, each test on a database of its own.
///
/// PostgreSQL comes from `POSTERN_TEST_POSTGRES` (libpq `key=value` pairs; scripts/test starts a
/// server in a temporary directory and sets it). The rule: without the variable the PostgreSQL
/// cases are left out, unless `POSTERN_REQUIRE_POSTGRES` is set (scripts/test sets it) — then they
/// run and fail, so a runner that means to test PostgreSQL cannot pass without it.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// The kinds this run tests.
    static var available: [StoreKind] {
        let environment = ProcessInfo.processInfo.environment
        let wanted = environment["POSTERN_TEST_POSTGRES"] != nil || environment["POSTERN_REQUIRE_POSTGRES"] != nil
        return wanted ? allCases : [.sqlite]
    }

    /// A new, empty database of this kind.
    func database() throws -> TestDatabase {
        switch self {
        case .sqlite: return try TestDatabase(sqlite: TemporaryDatabase())
        case .postgres: return try TestDatabase(postgresSchema: TestPostgres.newSchema())
        }
    }
}

/// The test server: where it is, and a schema per test (the tests run in parallel).
enum TestPostgres {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "POSTERN_REQUIRE_POSTGRES is set but POSTERN_TEST_POSTGRES is not: start a server with scripts/postgres start and export its connection string (scripts/test does)"
        }
    }

    /// The server's connection string.
    static func base() throws -> String {
        guard let base = ProcessInfo.processInfo.environment["POSTERN_TEST_POSTGRES"], !base.isEmpty else { throw Missing() }
        return base
    }

    /// A connection string whose tables live in a new, empty schema.
    static func newSchema() throws -> String {
        let base = try base()
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try PostgresConnection(#require(PostgresConnectionString(base)))
        try admin.executeSimple("CREATE SCHEMA \(schema)")
        return base + " options='-c search_path=\(schema)'"
    }
}

/// One database of either kind: opens stores on it (again, to see what survived) and runs raw SQL
/// on it beside the store.
struct TestDatabase: Sendable {
    let kind: StoreKind
    /// The SQLite file, or the PostgreSQL connection string.
    let location: String
    /// A directory for the master key file and anything else beside the database.
    let directory: TemporaryDatabase

    init(sqlite: TemporaryDatabase) {
        kind = .sqlite
        location = sqlite.path
        directory = sqlite
    }

    init(postgresSchema connectionString: String) throws {
        kind = .postgres
        location = connectionString
        directory = try TemporaryDatabase()
    }

    /// A master key file path beside the database.
    var keyFile: String { directory.directory.appendingPathComponent("postern.key").path }

    /// A new store on this database (migrating it if needed).
    /// The seal of SMS recipients the test stores use (a fixed test key).
    static let phoneSeal: PhoneNumberSeal = {
        guard let box = try? SecretBox(key: Array(repeating: 9, count: 32)) else { preconditionFailure("a 32-byte key makes a box") }
        return PhoneNumberSeal(box: box)
    }()

    func open(clock: any MonotonicClock = SystemMonotonicClock()) throws -> any Store {
        switch kind {
        case .sqlite: return try SQLiteStore(path: location, clock: clock, phoneSeal: PhoneSealSlot(Self.phoneSeal))
        case .postgres: return try PostgresStore(connectionString: location, phoneSeal: PhoneSealSlot(Self.phoneSeal))
        }
    }

    /// Runs `body` on a connection of its own, outside the store, committing what it did.
    @discardableResult
    func withSQL<T>(_ body: (any SQLSession) throws -> T) throws -> T {
        switch kind {
        case .sqlite:
            return try body(SQLiteConnection(path: location))
        case .postgres:
            let connection = try PostgresConnection(#require(PostgresConnectionString(location)))
            let session = PostgresSession(connection, isolation: .serializable, syncingLater: false)
            let result = try body(session)
            try session.commit()
            return result
        }
    }
}
