import PosternCore
import PosternCrypto

/// The `StoreWriter` over one connection inside an open transaction: the store's SQL, written
/// once for SQLite and PostgreSQL (``SQLSession`` is the seam; the outbox claim is the one
/// statement written per dialect).
public final class SQLStoreTransaction: StoreWriter {
    let db: any SQLSession
    /// Set by the writes that make mail due (`enqueue`, `retryDead`); the writer reads and resets
    /// it around each closure, and rings the doorbell after a commit that kept one.
    public var queuedMail = false

    /// Seals the numbers of queued SMS; nil: this store cannot queue SMS (``enqueueSMS`` refuses).
    let phoneSeal: PhoneNumberSeal?

    /// The transaction over `db`, which has a transaction open (or opens one on its first statement).
    public init(_ db: any SQLSession, phoneSeal: PhoneNumberSeal? = nil) {
        self.db = db
        self.phoneSeal = phoneSeal
    }

    // MARK: keys

    public func keys(purpose: KeyPurpose) throws -> [KeyRecord] {
        var keys: [KeyRecord] = []
        try db.query(
            "SELECT id, status, created_at, retired_at, verify_until, sealed_secret FROM keys WHERE purpose = ? ORDER BY status = 'active' DESC, created_at DESC",
            [.text(purpose.rawValue)]
        ) { row in
            guard let status = row.text(1).flatMap(KeyStatus.init(rawValue:)), let sealed = row.blob(5) else {
                throw StoreError.corrupt("key row")
            }
            keys.append(
                KeyRecord(
                    id: UInt32(truncatingIfNeeded: row.integer(0)), purpose: purpose, status: status,
                    createdAt: row.integer(2), retiredAt: row.optionalInteger(3), verifyUntil: row.optionalInteger(4),
                    sealedSecret: sealed))
        }
        return keys
    }

    public func insertKey(_ key: KeyRecord) throws {
        try db.execute(
            "INSERT INTO keys (id, purpose, status, created_at, retired_at, verify_until, sealed_secret) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .integer(Int64(key.id)), .text(key.purpose.rawValue), .text(key.status.rawValue), .integer(key.createdAt),
                key.retiredAt.map(SQLValue.integer) ?? .null, key.verifyUntil.map(SQLValue.integer) ?? .null,
                .blob(key.sealedSecret),
            ])
    }

    public func updateKey(_ key: KeyRecord) throws {
        let changed = try db.execute(
            "UPDATE keys SET status = ?, retired_at = ?, verify_until = ? WHERE id = ?",
            [
                .text(key.status.rawValue), key.retiredAt.map(SQLValue.integer) ?? .null,
                key.verifyUntil.map(SQLValue.integer) ?? .null, .integer(Int64(key.id)),
            ])
        guard changed == 1 else { throw StoreError.notFound("key") }
    }

    public func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int {
        try db.execute(
            "DELETE FROM keys WHERE purpose = ? AND status = 'retired' AND verify_until <= ?",
            [.text(purpose.rawValue), .integer(now)])
    }

    // MARK: accounts

    private static let accountColumns =
        "a.uid, a.email_verified, a.password_hash, a.display_name, a.attributes, a.locale, a.disabled, a.created_at, a.last_sign_in_at, a.providers, d.local_part, d.domain, a.session_version"

    private func readAccount(_ row: any SQLRow) -> Account {
        let email = row.text(10).flatMap { local in row.text(11).map { EmailAddress.restored(localPart: local, domain: $0) } }
        let providers = Set((row.text(9) ?? "").split(separator: ",").compactMap { Provider(rawValue: String($0)) })
        return Account(
            uid: row.text(0) ?? "", email: email, emailVerified: row.integer(1) != 0, passwordHash: row.text(2),
            displayName: row.text(3), attributes: row.text(4), locale: row.text(5), disabled: row.integer(6) != 0,
            createdAt: row.integer(7), lastSignInAt: row.optionalInteger(8), providers: providers,
            sessionVersion: row.integer(12))
    }

    public func account(uid: String) throws -> Account? {
        try db.first(
            "SELECT \(Self.accountColumns) FROM accounts a LEFT JOIN addresses d ON d.uid = a.uid WHERE a.uid = ?",
            [.text(uid)], readAccount)
    }

    public func account(address: EmailAddress) throws -> Account? {
        try db.first(
            "SELECT \(Self.accountColumns) FROM addresses d JOIN accounts a ON a.uid = d.uid WHERE d.normalized = ?",
            [.text(address.normalized)], readAccount)
    }

    public func accounts(after uid: String?, limit: Int) throws -> [Account] {
        var accounts: [Account] = []
        try db.query(
            "SELECT \(Self.accountColumns) FROM accounts a LEFT JOIN addresses d ON d.uid = a.uid WHERE a.uid > ? ORDER BY a.uid LIMIT ?",
            [.text(uid ?? ""), .integer(Int64(limit))]
        ) { accounts.append(readAccount($0)) }
        return accounts
    }

    public func passwordCredential(address: EmailAddress) throws -> PasswordCredential? {
        try db.first(
            "SELECT a.uid, a.password_hash FROM addresses d JOIN accounts a ON a.uid = d.uid WHERE d.normalized = ?",
            [.text(address.normalized)]
        ) { PasswordCredential(uid: $0.text(0) ?? "", passwordHash: $0.text(1)) }
    }

    public func passwordHashSample(prefix: String) throws -> String? {
        // substr, not LIKE: a scheme's marker is compared as it is, with no wildcard in it.
        try db.first(
            "SELECT password_hash FROM accounts WHERE substr(password_hash, 1, ?) = ? LIMIT 1",
            [.integer(Int64(prefix.utf8.count)), .text(prefix)]
        ) { $0.text(0) } ?? nil
    }

    private func accountValues(_ a: Account) -> [SQLValue] {
        [
            .integer(a.emailVerified ? 1 : 0), a.passwordHash.map(SQLValue.text) ?? .null,
            a.displayName.map(SQLValue.text) ?? .null, a.attributes.map(SQLValue.text) ?? .null,
            a.locale.map(SQLValue.text) ?? .null, .integer(a.disabled ? 1 : 0), .integer(a.createdAt),
            a.lastSignInAt.map(SQLValue.integer) ?? .null,
            .text(a.providers.map(\.rawValue).sorted().joined(separator: ",")), .integer(a.sessionVersion),
            .text(a.uid),
        ]
    }

    private func setAddress(of account: Account) throws {
        try db.execute("DELETE FROM addresses WHERE uid = ?", [.text(account.uid)])
        guard let email = account.email else { return }
        // DO NOTHING rather than an error: PostgreSQL aborts the whole transaction on a failed
        // statement, and a closure may go on after `addressTaken`.
        let inserted = try db.execute(
            "INSERT INTO addresses (normalized, local_part, domain, uid) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [.text(email.normalized), .text(email.localPart), .text(email.domain), .text(account.uid)])
        guard inserted == 1 else { throw StoreError.addressTaken }
    }

    public func insertAccount(_ account: Account) throws {
        try db.execute(
            "INSERT INTO accounts (email_verified, password_hash, display_name, attributes, locale, disabled, created_at, last_sign_in_at, providers, session_version, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            accountValues(account))
        try setAddress(of: account)
    }

    public func updateAccount(_ account: Account) throws {
        let changed = try db.execute(
            "UPDATE accounts SET email_verified = ?, password_hash = ?, display_name = ?, attributes = ?, locale = ?, disabled = ?, created_at = ?, last_sign_in_at = ?, providers = ?, session_version = ? WHERE uid = ?",
            accountValues(account))
        guard changed == 1 else { throw StoreError.notFound("account") }
        try setAddress(of: account)
    }

    public func deleteAccount(uid: String) throws {
        try db.execute("DELETE FROM accounts WHERE uid = ?", [.text(uid)])
    }

    // MARK: the single-use ledger

    public func isConsumed(nonce: [UInt8]) throws -> Bool {
        try db.first("SELECT 1 FROM consumed_codes WHERE nonce_hash = ?", [.blob(SHA256.hash(nonce))]) { _ in true } ?? false
    }

    public func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool {
        try db.execute(
            "INSERT INTO consumed_codes (nonce_hash, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [.blob(SHA256.hash(nonce)), .integer(expiresAt)]) == 1
    }

    public func pruneConsumedCodes(now: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "consumed_codes", key: "nonce_hash", condition: "expires_at <= ?", [.integer(now)], limit: limit)
    }

    // MARK: housekeeping

    /// Deletes at most `limit` rows of `table` that meet `condition`, chosen by `key`: one
    /// statement, run row-locked (``SQLSession/rowLocked(_:)``; PostgreSQL: READ COMMITTED), so a
    /// batch never makes a request's serializable transaction fail. The condition is checked again
    /// on the rows the DELETE locks, so a row a request changed meanwhile (a dead message queued
    /// again, a new failure on a guess budget) is kept. `from` narrows the rows looked at (the
    /// outbox's oldest), nil for all.
    func pruneBatch(table: String, key: String, condition: String, _ args: [SQLValue], limit: Int, from: String? = nil) throws -> Int {
        let source = from ?? table
        return try db.rowLocked {
            try db.execute(
                "DELETE FROM \(table) WHERE \(key) IN (SELECT \(key) FROM \(source) WHERE \(condition) LIMIT ?) AND \(condition)",
                args + [.integer(Int64(max(0, limit)))] + args)
        }
    }

    public func reclaimFreePages(_ pages: Int) throws {
        switch db.dialect {
        case .sqlite:
            // Each step of the pragma frees one page; `execute` steps it to the end.
            try db.execute("PRAGMA incremental_vacuum(\(max(0, pages)))")
        case .postgres:
            // Autovacuum makes the deleted rows' space reusable; the file is not shrunk.
            break
        }
    }
}
