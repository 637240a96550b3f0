import PosternCore

/// The behaviour every ``Store`` must have, as one list of cases that each implementation runs: the
/// in-memory store Core's tests use (`PosternCoreTests`), SQLite and PostgreSQL
/// (`PosternStoreTests`). A Core test that passes on the in-memory store then passes on behaviour
/// production has. (Kratos's `TestFlowPersister` is the model: one suite, every persister.)
///
/// A case gets a new, empty store and checks it through the `Store` API only; what only one kind
/// of store has (SQLite's files, PostgreSQL's notifications, reopening after a crash) stays in that
/// store's own tests. Each concern (a persister) adds its cases in a file of its own beside this
/// one, and lists them in ``cases``.
public enum StoreContract {
    /// Every case, in concern order.
    public static var cases: [StoreContractCase] {
        HeartbeatContract.cases
            + OutboxContract.cases
            + SMSOutboxContract.cases
            + WebhookDeliveryContract.cases
    }
}

/// One behaviour a store must have, run on a new, empty store.
public struct StoreContractCase: Sendable, CustomStringConvertible {
    /// The persister it checks (`accounts`, `outbox`, …).
    public let concern: String
    /// What it checks, as a sentence.
    public let name: String
    private let body: @Sendable (any Store) throws -> Void

    public init(_ concern: String, _ name: String, _ body: @escaping @Sendable (any Store) throws -> Void) {
        self.concern = concern
        self.name = name
        self.body = body
    }

    public var description: String { "\(concern): \(name)" }

    /// Runs the case on `store` (new and empty).
    /// - Throws: ``StoreContractFailure`` where the store does not behave as the case says, or
    ///   what the store threw.
    public func run(on store: any Store) throws { try body(store) }
}

/// A store that does not behave as a contract case says: what was expected, and where.
public struct StoreContractFailure: Error, CustomStringConvertible {
    public let description: String

    init(_ message: String, file: StaticString, line: UInt) { description = "\(file):\(line): \(message)" }
}

/// Fails the case unless `condition` holds.
public func expectContract(
    _ condition: Bool, _ message: @autoclosure () -> String = "expectation failed", file: StaticString = #fileID, line: UInt = #line
) throws {
    guard condition else { throw StoreContractFailure(message(), file: file, line: line) }
}

/// Fails the case unless `actual == expected`, naming both.
public func expectContract<T: Equatable>(
    _ actual: T, equals expected: T, _ what: @autoclosure () -> String = "value", file: StaticString = #fileID, line: UInt = #line
) throws {
    guard actual == expected else {
        throw StoreContractFailure("\(what()): got \(actual), expected \(expected)", file: file, line: line)
    }
}
