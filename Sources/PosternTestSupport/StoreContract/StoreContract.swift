import Foundation
import PosternCore
import Synchronization

/// The behaviour every ``Store`` must have, as one list of cases that each implementation runs: the
/// in-memory store Core's tests use (`PosternCoreTests`), SQLite and PostgreSQL
/// (`PosternStoreTests`). A Core test that passes on the in-memory store then passes on behaviour
/// production has. (Kratos's `TestFlowPersister` is the model: one suite, every persister.)
///
/// A case gets a new, empty store and checks it through the `Store` API only (directly, or through
/// the Core services over it: the flows, the importer, the vaults, housekeeping); what only one kind
/// of store has (SQLite's files, PostgreSQL's notifications, reopening after a crash) stays in that
/// store's own tests. Each concern (a persister) adds its cases in a file of its own beside this
/// one, and lists them in ``cases``.
public enum StoreContract {
    /// Every case, in concern order.
    public static var cases: [StoreContractCase] {
        AccountContract.cases
            + KeyContract.cases
            + ActionRequestContract.cases
            + SessionContract.cases
            + DeviceSessionContract.cases
            + ActivityContract.cases
            + LimitContract.cases
            + PhoneContract.cases
            + OIDCContract.cases
            + ProviderIdentityContract.cases
            + SMSAdmissionContract.cases
            + MailCapContract.cases
            + ChallengeContract.cases
            + WebhookEndpointContract.cases
            + HeartbeatContract.cases
            + HousekeepingContract.cases
            + FlowContract.cases
            + HookContract.cases
            + OutboxContract.cases
            + SuppressionContract.cases
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

    /// A case of `concern` that `body` checks on the store it is given.
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

/// Fails the case unless `body` throws an error of type `type`; returns that error.
@discardableResult
public func expectContractThrows<E: Error, R>(
    _ type: E.Type, _ what: @autoclosure () -> String = "an error", file: StaticString = #fileID, line: UInt = #line,
    _ body: () throws -> R
) throws -> E {
    do {
        _ = try body()
    } catch let error as E {
        return error
    } catch {
        throw StoreContractFailure("\(what()): threw \(error), expected \(E.self)", file: file, line: line)
    }
    throw StoreContractFailure("\(what()): threw nothing, expected \(E.self)", file: file, line: line)
}

/// The value, or a failure of the case when it is nil.
public func requireContract<T>(
    _ value: T?, _ what: @autoclosure () -> String = "value", file: StaticString = #fileID, line: UInt = #line
) throws -> T {
    guard let value else { throw StoreContractFailure("\(what()): got nil", file: file, line: line) }
    return value
}

/// A count that threads (or a doorbell's listeners) add to, for tests.
public final class Counter: Sendable {
    private let count = Mutex(0)
    public init() {}
    /// Adds one.
    public func increment() { count.withLock { $0 += 1 } }
    /// The count so far.
    public var value: Int { count.withLock { $0 } }
}

/// Runs `body` on `count` threads of its own at once (concurrentPerform stops at the core count,
/// and these bodies wait for one another), and returns when all have ended.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}
