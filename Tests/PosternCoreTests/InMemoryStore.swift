import PosternCore
import Synchronization

/// An in-memory `Store` for unit tests of Core: one lock, a copy of the state per transaction so a
/// throwing closure leaves nothing behind.
final class InMemoryStore: Store {
    struct State: Sendable {
        var keys: [UInt32: KeyRecord] = [:]
        var accounts: [String: Account] = [:]
        var consumed: [[UInt8]: Int64] = [:]
        var outbox: [QueuedMail] = []
        var suppressions: [String: String] = [:]
        var requests: [String: ActionRequest] = [:]
        var refreshTokens: [[UInt8]: RefreshTokenRecord] = [:]
        var rateEvents: [[UInt8]: [Int64]] = [:]
        var guesses: [[UInt8]: GuessRecord] = [:]
    }

    private let state = Mutex(State())

    /// The whole state, for assertions.
    func snapshot() -> State { state.withLock { $0 } }

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
        let snapshot = state.withLock { $0 }
        return try body(Transaction(state: snapshot))
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try state.withLock { current in
            let transaction = Transaction(state: current)
            let result = try body(transaction)
            current = transaction.state
            return result
        }
    }

    final class Transaction: StoreWriter {
        var state: State
        init(state: State) { self.state = state }

        func keys(purpose: KeyPurpose) throws -> [KeyRecord] {
            state.keys.values.filter { $0.purpose == purpose }
                .sorted { ($0.status == .active ? 0 : 1, -$0.createdAt) < ($1.status == .active ? 0 : 1, -$1.createdAt) }
        }
        func account(uid: String) throws -> Account? { state.accounts[uid] }
        func account(address: EmailAddress) throws -> Account? {
            state.accounts.values.first { $0.email == address }
        }
        func isConsumed(nonce: [UInt8]) throws -> Bool { state.consumed[nonce] != nil }
        func guessRecord(bucket: [UInt8]) throws -> GuessRecord? { state.guesses[bucket] }
        func setGuessRecord(bucket: [UInt8], _ record: GuessRecord?) throws { state.guesses[bucket] = record }
        func insertKey(_ key: KeyRecord) throws { state.keys[key.id] = key }
        func updateKey(_ key: KeyRecord) throws {
            guard state.keys[key.id] != nil else { throw StoreError.notFound("key") }
            state.keys[key.id] = key
        }
        func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int {
            let doomed = state.keys.values.filter { $0.purpose == purpose && $0.status == .retired && ($0.verifyUntil ?? 0) <= now }
            for key in doomed { state.keys[key.id] = nil }
            return doomed.count
        }
        func insertAccount(_ account: Account) throws {
            if let email = account.email, try self.account(address: email) != nil { throw StoreError.addressTaken }
            state.accounts[account.uid] = account
        }
        func updateAccount(_ account: Account) throws {
            guard state.accounts[account.uid] != nil else { throw StoreError.notFound("account") }
            if let email = account.email, let holder = try self.account(address: email), holder.uid != account.uid {
                throw StoreError.addressTaken
            }
            state.accounts[account.uid] = account
        }
        func deleteAccount(uid: String) throws {
            state.accounts[uid] = nil
            state.refreshTokens = state.refreshTokens.filter { $0.value.uid != uid }
        }
        func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool {
            guard state.consumed[nonce] == nil else { return false }
            state.consumed[nonce] = expiresAt
            return true
        }
        func pruneConsumedCodes(now: Int64) throws -> Int {
            let before = state.consumed.count
            state.consumed = state.consumed.filter { $0.value > now }
            return before - state.consumed.count
        }
    }
}
