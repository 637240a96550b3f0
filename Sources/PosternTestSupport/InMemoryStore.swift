import Foundation
import PosternCore
import Synchronization

/// An in-memory `Store` for unit tests of Core: one lock, a copy of the state per transaction so a
/// throwing closure leaves nothing behind.
public final class InMemoryStore: Store {
    public struct State: Sendable {
        public var keys: [UInt32: KeyRecord] = [:]
        public var accounts: [String: Account] = [:]
        public var consumed: [[UInt8]: Int64] = [:]
        public var outbox: [QueuedMail] = []
        public var suppressions: [String: (reason: String, at: Int64)] = [:]
        public var requests: [String: ActionRequest] = [:]
        public var refreshTokens: [[UInt8]: RefreshTokenRecord] = [:]
        public var rateEvents: [[UInt8]: [Int64]] = [:]
        /// The per-client limit: bucket → tat (ms).
        public var clientRate: [[UInt8]: Int64] = [:]
        /// Fixed-window counters (`countInWindow`), by bucket.
        public var rateWindows: [[UInt8]: (start: Int64, count: Int64)] = [:]
        public var guesses: [[UInt8]: GuessRecord] = [:]
        /// Webhook deliveries; a delivery's id is its index + 1.
        public var webhooks: [QueuedWebhook] = []
        /// Endpoints a 410 disabled, with the reason.
        public var disabledEndpoints: [String: String] = [:]
        public var webhookEndpoints: [WebhookEndpointRecord] = []
        public var outboxAttempts: [OutboxAttempt] = []
        /// SMS outbox messages; a message's id is its index + 1.
        public var sms: [QueuedSMS] = []
        /// Daemons' heartbeats, by owner.
        public var heartbeats: [String: DaemonHeartbeat] = [:]
        /// Phone claims by id (`verifiedAt` is read from `phoneNumbers`).
        public var phoneClaims: [String: PhoneClaim] = [:]
        /// The numbers claims keep until settled (sealed in a real store; here as they are).
        public var claimNumbers: [String: PhoneNumber] = [:]
        /// The verified holder of each number, by its keyed hash.
        public var phoneNumbers: [[UInt8]: PhoneNumberHolder] = [:]
        /// Phone sign-in requests by their number's keyed hash (one per number).
        public var phoneSignIns: [[UInt8]: PhoneSignInCode] = [:]
        /// OpenID Connect authorization codes by the SHA-256 of the code.
        public var authorizationCodes: [[UInt8]: AuthorizationCodeRecord] = [:]
        /// OpenID Connect clients by id.
        public var oidcClients: [String: OIDCClient] = [:]
        /// Authorization requests waiting for a sign-in, by id.
        public var oidcRequests: [String: OIDCPendingRequest] = [:]
        /// Browser sessions by the SHA-256 of their cookie.
        public var oidcBrowserSessions: [[UInt8]: OIDCBrowserSession] = [:]
        /// Consents by uid, then client id.
        public var oidcConsents: [String: [String: OIDCConsent]] = [:]
        /// Identity providers' subjects linked to accounts, by provider and subject
        /// (``Transaction/identityKey(provider:subject:)``).
        public var providerIdentities: [String: ProviderIdentityLink] = [:]
        /// The replay ledger of providers' ID tokens: the SHA-256 of a used token → its expiry.
        public var providerTokenUses: [[UInt8]: Int64] = [:]
        /// The sessions users see, by their public id.
        public var deviceSessions: [String: DeviceSession] = [:]
        /// Accounts' activity, in insertion order (`id` is the position plus one, never reused).
        public var activity: [ActivityEntry] = []
        /// The last activity id given.
        public var lastActivityID: Int64 = 0
    }

    private let state = Mutex(State())
    /// Lookups of the tables a link's verification reads (accounts, action requests, the
    /// single-use ledger), counted across transactions: tests compare the store work of answers.
    public let lookups = LookupCounter()

    /// A count shared by the transactions of one store.
    public final class LookupCounter: Sendable {
        private let value = Atomic<Int>(0)
        /// The count so far.
        public var count: Int { value.load(ordering: .relaxed) }
        func add() { value.add(1, ordering: .relaxed) }
    }
    /// Claims of due mail (``Transaction/claimDue(_:owner:now:leaseUntil:limit:claimable:)`` of ``LeasedQueue/mail``), found
    /// or not, counted across transactions: a test that a worker left a message alone waits for
    /// the worker to have looked again, instead of sleeping.
    public let outboxClaims = LookupCounter()
    /// Rung after each write that queued mail.
    public let mailDoorbell = MailDoorbell()
    /// Seconds each write takes before it is committed (0: none): a slow store, for tests of
    /// what waits for a commit.
    public let commitDelay = Mutex<Double>(0)

    private let confined: Bool

    /// An empty store; `confinedToThisMachine` false makes it stand for one several machines
    /// share (PostgreSQL), for the flows that behave differently on one (the per-IP limit).
    public init(confinedToThisMachine: Bool = true) { confined = confinedToThisMachine }

    /// One process's memory: nothing on another machine opens it (unless made to stand for a
    /// shared store).
    public var isConfinedToThisMachine: Bool { confined }

    /// The whole state, for assertions.
    public func snapshot() -> State { state.withLock { $0 } }

    public func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
        let snapshot = state.withLock { $0 }
        return try body(Transaction(state: snapshot, lookups: lookups, claims: outboxClaims))
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        let delay = commitDelay.withLock { $0 }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        let (result, queuedMail) = try state.withLock { current in
            let transaction = Transaction(state: current, lookups: lookups, claims: outboxClaims)
            let result = try body(transaction)
            current = transaction.state
            return (result, transaction.queuedMail)
        }
        if queuedMail { mailDoorbell.ring() }
        return result
    }

    public final class Transaction: StoreWriter {
        public var state: State
        /// Set by `enqueue` and `retryDead`.
        public var queuedMail = false
        let lookups: LookupCounter?
        let claims: LookupCounter?
        public init(state: State) {
            self.state = state
            self.lookups = nil
            self.claims = nil
        }
        init(state: State, lookups: LookupCounter, claims: LookupCounter) {
            self.state = state
            self.lookups = lookups
            self.claims = claims
        }
        func looked() { lookups?.add() }

        /// Nothing to give back: memory is freed as rows go.
        public func reclaimFreePages(_ pages: Int) throws {}

        /// Removes at most `limit` entries of `table` for which `isDoomed` holds; returns how many.
        static func prune<Key, Value>(_ table: inout [Key: Value], limit: Int, _ isDoomed: (Value) -> Bool) -> Int {
            let doomed = table.filter { isDoomed($0.value) }.keys.prefix(max(0, limit))
            for key in doomed { table[key] = nil }
            return doomed.count
        }
    }
}
