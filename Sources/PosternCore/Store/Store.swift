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

/// Reads inside one consistent snapshot.
public protocol StoreReader: OutboxReader, WebhookReader, SMSOutboxReader, HeartbeatReader, PhoneReader {
    /// All keys of `purpose`, active first.
    func keys(purpose: KeyPurpose) throws -> [KeyRecord]
    /// The account with `uid`.
    func account(uid: String) throws -> Account?
    /// The account that holds `address` (compared by its normalized form).
    func account(address: EmailAddress) throws -> Account?
    /// At most `limit` accounts in uid order, starting after `uid` (nil: from the first): pages
    /// for `postern users export`.
    func accounts(after uid: String?, limit: Int) throws -> [Account]
    /// The uid and password hash of the account that holds `address`: all a password sign-in
    /// reads before the hash is checked, so that a known address costs about what an unknown one
    /// does (a whole account row took ~20 µs longer to read than a miss, and showed in timing).
    func passwordCredential(address: EmailAddress) throws -> PasswordCredential?
    /// Some account's password hash that starts with `prefix` (a scheme's marker, e.g. `$2b$`),
    /// or nil when none does: what the daemon times once at start so that checks of every scheme
    /// in the store take as long (`PasswordCheckPacer`).
    func passwordHashSample(prefix: String) throws -> String?
    /// Whether the code with this nonce has been consumed.
    func isConsumed(nonce: [UInt8]) throws -> Bool
    /// The action request with `id`.
    func actionRequest(id: String) throws -> ActionRequest?
    /// Unconsumed, unexpired requests of `purpose` for `address`, newest first.
    func openActionRequests(purpose: ActionRequest.Purpose, address: EmailAddress, now: Int64) throws -> [ActionRequest]
    /// The refresh token whose SHA-256 is `hash`.
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
    /// The failed guesses counted against `bucket` (an opaque key, never an address in the clear).
    func guessRecord(bucket: [UInt8]) throws -> GuessRecord?
    /// The `tat` (ms) a client bucket holds (``ClientRatePolicy``), nil when it has no row: what a
    /// check that counts nothing reads.
    func clientTokenTAT(bucket: [UInt8]) throws -> Int64?
}

/// Changes inside one transaction: all of them land, or none.
public protocol StoreWriter: StoreReader, LeasedQueueWriter, OutboxWriter, WebhookWriter, SMSOutboxWriter, HeartbeatWriter, PhoneWriter {
    /// Adds a key.
    func insertKey(_ key: KeyRecord) throws
    /// Replaces a key's metadata (status, retiredAt, verifyUntil).
    func updateKey(_ key: KeyRecord) throws
    /// Removes keys of `purpose` whose `verifyUntil` is before `now`; returns how many.
    func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int

    /// Adds an account. Throws `StoreError.addressTaken` when its address is held.
    func insertAccount(_ account: Account) throws
    /// Replaces an account. Throws `addressTaken` when its new address is held, `notFound` when absent.
    func updateAccount(_ account: Account) throws
    /// Deletes an account and everything hanging off it.
    func deleteAccount(uid: String) throws

    /// Records a code as used; false when it was already (exactly one concurrent caller gets true).
    func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool
    /// Forgets at most `limit` used codes whose code expired at or before `now` (a code is refused
    /// as expired from its expiry on, so its entry is no longer needed); returns how many.
    func pruneConsumedCodes(now: Int64, limit: Int) throws -> Int

    /// Records an action request.
    func insertActionRequest(_ request: ActionRequest) throws
    /// Replaces an action request (its code state). Throws `notFound` when absent.
    func updateActionRequest(_ request: ActionRequest) throws
    /// Forgets at most `limit` requests that expired at or before `horizon`; returns how many.
    func pruneActionRequests(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Records a refresh token.
    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    /// Marks a token as exchanged for its successor.
    func markRefreshTokenRotated(hash: [UInt8], at: Int64) throws
    /// Revokes every token of a family; returns how many were live.
    func revokeRefreshFamily(_ family: String) throws -> Int
    /// Revokes every token of an account; returns how many were live.
    func revokeRefreshTokens(uid: String) throws -> Int
    /// Revokes the tokens of an account's sessions that signed in with `method`; returns how many were live.
    func revokeRefreshTokens(uid: String, method: String) throws -> Int
    /// Forgets at most `limit` refresh tokens (live, rotated or revoked) that expired at or before
    /// `horizon`; returns how many.
    func pruneRefreshTokens(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Counts one event against `bucket` (an opaque key, never an address in the clear): nil when
    /// allowed, else the seconds until it would be. `interval`: least seconds between two events
    /// (0: none); `perHour`: most events in a rolling hour window (0: none).
    func rateLimit(bucket: [UInt8], now: Int64, interval: Int64, perHour: Int64) throws -> Int64?
    /// Counts one event against `bucket` (an opaque key) in fixed windows of `window` seconds
    /// (starting at multiples of it): nil when fewer than `limit` were counted in the current
    /// window (this one is counted), else the seconds until the next window. One row per bucket,
    /// reset in place when its window has passed: for budgets too large for a row per event (a
    /// country's SMS an hour, all SMS a day), and the rows stay as few as the buckets.
    func countInWindow(bucket: [UInt8], now: Int64, window: Int64, limit: Int64) throws -> Int64?
    /// Forgets at most `limit` rate-limit events at or before `horizon` (of every bucket: a bucket
    /// forgets its own old events whenever it counts one, but most buckets never count again);
    /// returns how many.
    func pruneRateEvents(atOrBefore horizon: Int64, limit: Int) throws -> Int
    /// Forgets at most `limit` fixed-window counters (``countInWindow(bucket:now:window:limit:)``)
    /// whose window started at or before `horizon`; returns how many.
    func pruneRateWindows(startedBy horizon: Int64, limit: Int) throws -> Int

    /// Counts one request of a client (an opaque `bucket`, never an IP address in the clear)
    /// against `allowed` requests in `windowMillis` (``ClientRatePolicy``: a minute for
    /// `--ip-per-minute`, an hour for the admin token's guess budget) at `nowMillis`: nil when
    /// allowed, else the seconds until one would be. One atomic upsert of one row, so every daemon
    /// on the database shares one limit per client and concurrent checks never serialize on a
    /// snapshot.
    func takeClientToken(bucket: [UInt8], nowMillis: Int64, allowed: Int64, windowMillis: Int64) throws -> Int64?
    /// Forgets at most `limit` client buckets that are full again at `nowMillis` (their `tat` at
    /// or before it: the row says nothing more than a missing one); returns how many.
    func pruneClientBuckets(fullBy nowMillis: Int64, limit: Int) throws -> Int

    /// Replaces the failed guesses counted against `bucket`; nil clears them.
    func setGuessRecord(bucket: [UInt8], _ record: GuessRecord?) throws
    /// Forgets at most `limit` guess budgets whose last failure is at or before `horizon`; returns
    /// how many.
    func pruneGuessRecords(lastFailureBy horizon: Int64, limit: Int) throws -> Int

    /// Gives the file back up to `pages` of the pages deletes freed (SQLite: `incremental_vacuum`);
    /// nothing where the database reclaims space itself (PostgreSQL's autovacuum, memory).
    func reclaimFreePages(_ pages: Int) throws
}

extension StoreWriter {
    /// Counts one request of a client against `perMinute` (``ClientRatePolicy``, a minute's window).
    public func takeClientToken(bucket: [UInt8], nowMillis: Int64, perMinute: Int64) throws -> Int64? {
        try takeClientToken(bucket: bucket, nowMillis: nowMillis, allowed: perMinute, windowMillis: ClientRatePolicy.window)
    }
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
}

/// A store whose writes are queued to a writer of its own (SQLite's group commit), so that a caller
/// can hand one over and go on: the outbox workers' outcome records, which overlap the next send,
/// and the requests the HTTP server answers from their commit instead of parking a thread on it.
/// A store without one (PostgreSQL, whose writes run on the caller's connection) is given the
/// records by a thread that commits them for the callers (the outbox's `OutcomeRecorder`), and
/// its requests by the server's request threads.
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

    /// Runs `body`: for stores no other process shares, or whose writers take turns anyway.
    public func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T? { try body() }

    /// Durable at once: for stores whose writes cost nothing to flush.
    public func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try write(body)
    }
}

/// What a password sign-in checks first: whose address it is, and their hash.
public struct PasswordCredential: Sendable, Equatable {
    public let uid: String
    public let passwordHash: String?

    public init(uid: String, passwordHash: String?) {
        self.uid = uid
        self.passwordHash = passwordHash
    }
}

extension StoreReader {
    /// Read from the whole account, for stores where that costs nothing (in memory).
    public func passwordCredential(address: EmailAddress) throws -> PasswordCredential? {
        try account(address: address).map { PasswordCredential(uid: $0.uid, passwordHash: $0.passwordHash) }
    }
}
