import PosternCore
import PosternCrypto

/// Accounts (``AccountWriter``).
extension SQLStoreTransaction {
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

    public func accounts(addresses: [EmailAddress]) throws -> [String: Account] {
        var found: [String: Account] = [:]
        for keys in Self.inLists(addresses.map(\.normalized)) {
            try db.query(
                "SELECT \(Self.accountColumns) FROM addresses d JOIN accounts a ON a.uid = d.uid WHERE d.normalized IN (\(keys.placeholders))",
                keys.values
            ) { row in
                let account = readAccount(row)
                if let key = account.email?.normalized { found[key] = account }
            }
        }
        return found
    }

    public func accounts(after uid: String?, limit: Int) throws -> [Account] {
        var accounts: [Account] = []
        try db.query(
            "SELECT \(Self.accountColumns) FROM accounts a LEFT JOIN addresses d ON d.uid = a.uid WHERE a.uid > ? ORDER BY a.uid LIMIT ?",
            [.text(uid ?? ""), .integer(Int64(limit))]
        ) { accounts.append(readAccount($0)) }
        return accounts
    }

    public func accounts(newestFirstAfter cursor: UserCursor?, matching query: UserQuery?, limit: Int) throws -> [Account] {
        var source = "accounts a"
        var args: [SQLValue] = []
        if let query {
            // The matches first, then their page: the address key's range (its index) and the
            // uid's key, so that a search reads what it finds, not the table in time order. The
            // prefix is compared as text (no LIKE: `%` and `_` are characters); in byte order
            // (COLLATE "C" on PostgreSQL) every address that starts with it lies in the range.
            let collate = db.dialect == .postgres ? " COLLATE \"C\"" : ""
            source = """
                (SELECT uid FROM addresses WHERE normalized\(collate) >= ? AND normalized\(collate) < ? AND substr(normalized, 1, ?) = ?
                 UNION SELECT uid FROM accounts WHERE uid = ?) m JOIN accounts a ON a.uid = m.uid
                """
            let prefix = query.addressPrefix
            args += [.text(prefix), .text(prefix + "\u{10FFFF}"), .integer(Int64(prefix.unicodeScalars.count)), .text(prefix), .text(query.uid)]
        }
        var filter = ""
        if let cursor {
            // A row value, not `created_at < ? OR (created_at = ? AND uid < ?)`: with the time
            // bound twice SQLite cannot tell the two are one and reads the index from the newest
            // row down to the cursor (41 ms at page 5,000 of a million, bench/users; 0.2 ms so).
            filter = "WHERE (a.created_at, a.uid) < (?, ?)"
            args += [.integer(cursor.createdAt), .text(cursor.uid)]
        }
        var accounts: [Account] = []
        try db.query(
            """
            SELECT \(Self.accountColumns) FROM \(source) LEFT JOIN addresses d ON d.uid = a.uid \(filter)
            ORDER BY a.created_at DESC, a.uid DESC LIMIT ?
            """,
            args + [.integer(Int64(max(0, limit)))]
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
        // The activity has no foreign key (see the schema's `sessionsAndActivity`).
        try db.execute("DELETE FROM account_activity WHERE uid = ?", [.text(uid)])
        try db.execute("DELETE FROM accounts WHERE uid = ?", [.text(uid)])
    }
}
