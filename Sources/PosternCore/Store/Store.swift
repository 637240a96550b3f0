/// Why the store refused or failed an operation.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Sendable, Hashable {
        case addressTaken
        case notFound(String)
        case unavailable(String)
        case corrupt(String)
        case duplicate(String)
        case newerSchema(found: Int, known: Int)
    }
    private let kind: Kind

    /// The normalized address already belongs to another account.
    public static let addressTaken = StoreError(kind: .addressTaken)
    /// The row to change does not exist (`what` names the kind of row, never its content).
    public static func notFound(_ what: String) -> StoreError { StoreError(kind: .notFound(what)) }
    /// The database could not be opened, locked, or written (disk full, I/O error).
    public static func unavailable(_ detail: String) -> StoreError { StoreError(kind: .unavailable(detail)) }
    /// A stored value could not be read back.
    public static func corrupt(_ detail: String) -> StoreError { StoreError(kind: .corrupt(detail)) }

    /// A row with the same key exists already (`what` names the key, never its value).
    public static func duplicate(_ what: String) -> StoreError { StoreError(kind: .duplicate(what)) }
    /// The database was migrated by a newer Postern (schema `found`, this one knows up to `known`):
    /// serving it could misread rows the newer version writes, so the store refuses to open it.
    public static func newerSchema(found: Int, known: Int) -> StoreError {
        StoreError(kind: .newerSchema(found: found, known: known))
    }

    /// True for `addressTaken`.
    public var isAddressTaken: Bool { kind == .addressTaken }
    /// True for `newerSchema`.
    public var isNewerSchema: Bool {
        if case .newerSchema = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .addressTaken: "the address already belongs to an account"
        case .notFound(let what): "no such \(what)"
        case .unavailable(let detail): "the store is unavailable: \(detail)"
        case .corrupt(let detail): "the store holds an unreadable value: \(detail)"
        case .duplicate(let what): "a row with that key exists already (\(what))"
        case .newerSchema(let found, let known):
            "the database's schema is version \(found), newer than this postern knows (\(known)): run the newer postern, or restore a backup made before it migrated"
        }
    }
}

/// Reads inside one consistent snapshot: every persister's reads. A flow's helpers take the
/// narrowest of them they need (`any AccountReader & SessionReader`), so that what a flow touches
/// is named where it is used.
public protocol StoreReader:
    KeyReader, AccountReader, ActionRequestReader, SessionReader, LimitReader, OutboxReader, WebhookReader, SMSOutboxReader,
    HeartbeatReader, PhoneReader, OIDCReader, ProviderIdentityReader, ActivityReader
{}

/// Changes inside one transaction: every persister's, all of them landing or none. One transaction
/// spans persisters where a flow needs atomicity (a sign-in's account, session and ledger).
public protocol StoreWriter:
    StoreReader, KeyWriter, AccountWriter, ActionRequestWriter, SessionWriter, LimitWriter, LeasedQueueWriter, OutboxWriter,
    WebhookWriter, SMSOutboxWriter, HeartbeatWriter, PhoneWriter, OIDCWriter, ProviderIdentityWriter, ActivityWriter
{
    /// Gives the file back up to `pages` of the pages deletes freed (SQLite: `incremental_vacuum`);
    /// nothing where the database reclaims space itself (PostgreSQL's autovacuum, memory).
    func reclaimFreePages(_ pages: Int) throws
}

/// Durable state behind Core. SQLite is the embedded default; PostgreSQL implements the same.
///
/// A write closure runs inside a transaction and is committed durably before `write` returns;
/// writers may be batched into one commit (group commit). If the closure throws, none of its changes
/// are kept and the error is rethrown. Closures must not block on anything but the store.
///
/// Isolation the flows rely on: write closures are serializable — each sees every write committed
/// before it and none that commits after it starts, as if the writes ran one at a time (SQLite:
/// one writer thread runs them in turn, each in its own savepoint). The flows read, decide and
/// write in one closure on that basis ("consumed?", "guess budget left?", "lease still mine?"). A
/// store that runs writes concurrently must give the same guarantee (PostgreSQL: SERIALIZABLE
/// transactions on a pool of connections, a serialization failure or deadlock retried): such a
/// store may run a closure more than once, so a closure has no effect outside the store that
/// matters if repeated (a counter in memory may count twice) and returns what its last run decided.
/// Reads see one consistent snapshot, which may be older than a write that has just returned.
public protocol Store: Sendable {
    /// Runs `body` against a consistent snapshot.
    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T
    /// Runs `body` in a transaction and returns once it is durable.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T
    /// Runs `body` in a transaction and returns once it is committed; it reaches the disk within
    /// the store's sync interval (SQLite: 0.2 s) or with the next ``write(_:)``, whichever is first.
    /// It survives a crash of the process at once, a crash of the machine after that interval.
    ///
    /// Only for records whose loss costs a repeat, never a loss: a delivery outcome (a lost "sent"
    /// means one more copy of a message that was delivered; a lost retry and its kept body mean the
    /// message is composed anew), a housekeeping delete (a lost one is made again by the next
    /// round). Requests and queued mail use ``write(_:)``.
    func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T
    /// Commits what is queued, makes everything committed durable, and refuses later writes (reads
    /// still work). Called once, at shutdown.
    func close()
    /// Rung after each commit whose transactions queued mail (`enqueue`), made a dead message
    /// due again (`retryDead`) or took back a dead daemon's claims (`reclaimClaims`), once per commit.
    var mailDoorbell: MailDoorbell { get }
    /// Runs `body` unless another process sharing the database runs a body under `lock` now; nil
    /// then, without running it. For work one daemon of several does (a housekeeping round):
    /// PostgreSQL takes a session-level advisory lock with `pg_try_advisory_lock`. A store only one
    /// daemon opens, or whose writers are serialized anyway (SQLite), just runs it.
    /// - Throws: what `body` throws, or `StoreError.unavailable` when the lock cannot be asked for.
    func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T?
    /// Whether every process that opens this store runs on this machine (a SQLite file: yes;
    /// PostgreSQL: no), so that a claim's owner can be looked up by its pid
    /// (``LivenessPolicy``). False unless a store says so.
    var isConfinedToThisMachine: Bool { get }
    /// Round trips to a database server so far: each wait for its answer (PostgreSQL), for
    /// `/metrics` and the benchmark; nil for an embedded store (SQLite, in memory).
    var serverRoundTrips: Int? { get }
    /// How the queued writes were committed in batches so far (PostgreSQL's batch writer), for
    /// `/metrics`; nil for a store that does not report them.
    var writeBatches: WriteBatchCounts? { get }
}

/// How a store's queued writes (``QueuedWriteStore``) were committed together: transactions that
/// committed several, the writes they held, and the batches the server failed as a whole, whose
/// writes then ran one by one.
public struct WriteBatchCounts: Sendable, Equatable {
    public var committed = 0
    public var writes = 0
    public var fellBack = 0

    public init(committed: Int = 0, writes: Int = 0, fellBack: Int = 0) {
        self.committed = committed
        self.writes = writes
        self.fellBack = fellBack
    }
}

/// A store whose writes are queued to a writer of its own (SQLite's group commit, PostgreSQL's batch
/// writer), so that a caller can hand one over and go on: the outbox workers' outcome records,
/// which overlap the next send, and the requests' mail, which many requests commit together. On a
/// store only this machine opens (SQLite) the HTTP server answers such requests from their commit
/// instead of parking a thread on it. A store without one (the in-memory store) is given the
/// records by a thread that commits them for the callers (the outbox's `OutcomeRecorder`).
public protocol QueuedWriteStore: Store {
    /// Queues `body` as ``Store/write(_:)`` runs it (``Store/writeSyncingLater(_:)`` when
    /// `syncingLater`) and returns at once; `done` is called on the writer's thread with what
    /// `body` returned once it is committed (and durable unless `syncingLater`), or with its error
    /// (or the commit's, or `StoreError.unavailable` when the store is closed). `done` must not block.
    /// A `gathering` write may wait a moment for others like it to share its commit (for a caller
    /// that does not wait for it right away).
    func queueWrite<T: Sendable>(
        syncingLater: Bool, gathering: Bool, _ body: @escaping @Sendable (any StoreWriter) throws -> T,
        done: @escaping @Sendable (Result<T, any Error>) -> Void)
}

/// A lock that processes sharing one database take around work one of them does at a time.
public struct StoreLock: Sendable, Hashable {
    /// The lock's key (PostgreSQL: the advisory lock's 64-bit key).
    public let key: Int64

    /// The housekeeping round: ASCII "posternH".
    public static let housekeeping = StoreLock(key: 0x706f_7374_6572_6e48)
}

extension Store {
    /// Nothing to flush: for stores whose writes are durable when they return.
    public func close() {}

    /// Another machine may open it: pids say nothing.
    public var isConfinedToThisMachine: Bool { false }

    /// None: an embedded store.
    public var serverRoundTrips: Int? { nil }

    /// None reported.
    public var writeBatches: WriteBatchCounts? { nil }

    /// Runs `body`: for stores no other process shares, or whose writers take turns anyway.
    public func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T? { try body() }

    /// Durable at once: for stores whose writes cost nothing to flush.
    public func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try write(body)
    }
}
