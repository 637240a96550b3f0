/// The accounts' persister: who signs in, by uid and by address.
public protocol AccountReader {
    /// The account with `uid`.
    func account(uid: String) throws -> Account?
    /// The account that holds `address` (compared by its normalized form).
    func account(address: EmailAddress) throws -> Account?
    /// The accounts that hold these addresses, by the address's normalized form (one no account
    /// holds is absent), in one read: the content stage reads a worker's batch at once.
    func accounts(addresses: [EmailAddress]) throws -> [String: Account]
    /// At most `limit` accounts in uid order, starting after `uid` (nil: from the first): pages
    /// for `postern users export`.
    func accounts(after uid: String?, limit: Int) throws -> [Account]
    /// At most `limit` accounts newest first (creation time, then uid, both descending) after
    /// `cursor` (nil: from the newest), only those `query` keeps (nil: all): pages of the admin
    /// API's user list, read by keyset so that a deep page costs what the first does. A query
    /// reads its matches by key (the address's range, the uid) and sorts them: it costs what it
    /// matches, not the table.
    func accounts(newestFirstAfter cursor: UserCursor?, matching query: UserQuery?, limit: Int) throws -> [Account]
    /// The uid and password hash of the account that holds `address`: all a password sign-in
    /// reads before the hash is checked, so that a known address costs about what an unknown one
    /// does (a whole account row took ~20 µs longer to read than a miss, and showed in timing).
    func passwordCredential(address: EmailAddress) throws -> PasswordCredential?
    /// Some account's password hash that starts with `prefix` (a scheme's marker, e.g. `$2b$`),
    /// or nil when none does: what the daemon times once at start so that checks of every scheme
    /// in the store take as long (`PasswordCheckPacer`).
    func passwordHashSample(prefix: String) throws -> String?
}

/// Account changes.
public protocol AccountWriter: AccountReader {
    /// Adds an account. Throws `StoreError.addressTaken` when its address is held.
    func insertAccount(_ account: Account) throws
    /// Replaces an account. Throws `addressTaken` when its new address is held, `notFound` when absent.
    func updateAccount(_ account: Account) throws
    /// Deletes an account and everything hanging off it.
    func deleteAccount(uid: String) throws
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

extension AccountReader {
    /// Read from the whole account, for stores where that costs nothing (in memory).
    public func passwordCredential(address: EmailAddress) throws -> PasswordCredential? {
        try account(address: address).map { PasswordCredential(uid: $0.uid, passwordHash: $0.passwordHash) }
    }
}
