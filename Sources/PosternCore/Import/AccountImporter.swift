/// What an import did (or, in a dry run, would do): counts, and every row not imported with its
/// line and reason. Holds no address, hash or password.
public struct ImportSummary: Sendable, Hashable {
    /// A row that was not imported.
    public struct Refusal: Sendable, Hashable {
        /// The line the row starts on.
        public let line: Int
        /// Why: a malformed field, "address held by another account" or "identity linked to another
        /// account".
        public let reason: String

        /// Creates a refusal.
        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// Accounts created.
    public var imported = 0
    /// Rows whose uid is already in the database (an earlier run, or a repeat in the file).
    public var skipped = 0
    /// Rows whose address belongs to another account, or one of whose identities (Sign in with
    /// Apple, Google, …) is linked to another account: never overwritten.
    public var conflicts: [Refusal] = []
    /// Accounts created without the password hash their row gave, because the row's address was
    /// not verified: whoever set that password never proved the address (an attacker may have
    /// signed up with it first), so it is never usable. They sign in by link and choose one.
    public var passwordsDropped = 0
    /// Rows that could not be read.
    public var malformed: [Refusal] = []
    /// True when `--strict` found malformed rows and so imported nothing.
    public var abandoned = false
    /// True for a dry run (nothing was written).
    public var dryRun = false

    /// Rows read.
    public var rows: Int { imported + skipped + conflicts.count + malformed.count }
}

/// Imports accounts from export rows into a live store: a row whose uid exists is skipped (so a
/// re-run, or a run after a crash, changes nothing that an earlier one did), a row whose address
/// another account holds, or one of whose identities another account has linked, is a conflict
/// and is left out, and rows are committed in batches. An account comes in with its identities;
/// one whose address is not verified comes in without its password (``Account/hasUnprovedPassword``).
public struct AccountImporter: Sendable {
    let store: any Store
    let batchSize: Int

    /// An importer over `store` committing `batchSize` rows per transaction.
    public init(store: any Store, batchSize: Int = 500) {
        self.store = store
        self.batchSize = max(1, batchSize)
    }

    /// Imports `rows`. With `strict`, one malformed row imports nothing; with `dryRun`, every
    /// batch is rolled back after it is checked (all in one transaction, so that repeats inside
    /// the file are found as a real run would find them). `progress` gets the rows done so far
    /// after each batch.
    /// - Throws: `StoreError` when the store fails (the batches committed so far stay; run again
    ///   to go on).
    public func run(
        _ rows: [ImportRow], strict: Bool = false, dryRun: Bool = false, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        var summary = ImportSummary()
        summary.dryRun = dryRun
        var accounts: [(line: Int, imported: ImportedAccount)] = []
        for row in rows {
            switch row.content {
            case .success(let account): accounts.append((row.line, ImportedAccount(account: account, identities: row.identities)))
            case .failure(let problem): summary.malformed.append(.init(line: row.line, reason: problem.reason))
            }
        }
        if strict && !summary.malformed.isEmpty {
            summary.abandoned = true
            return summary
        }
        if dryRun {
            let all = accounts
            do {
                _ = try store.write { (tx: Writes) -> BatchOutcome in throw DryRun(outcome: try Self.apply(all, tx: tx)) }
            } catch let dry as DryRun {
                summary.add(dry.outcome)
            }
            progress(rows.count)
            return summary
        }
        var done = summary.malformed.count
        var start = 0
        while start < accounts.count {
            let batch = Array(accounts[start..<min(start + batchSize, accounts.count)])
            summary.add(try commit(batch))
            start += batch.count
            done += batch.count
            progress(done)
        }
        return summary
    }

    /// One batch in one transaction; tried again once when a sign-up raced it to an address
    /// between the check and the insert (the batch's checks then run again).
    private func commit(_ batch: [(line: Int, imported: ImportedAccount)]) throws -> BatchOutcome {
        do {
            return try store.write { (tx: Writes) in try Self.apply(batch, tx: tx) }
        } catch let error as StoreError where error.isAddressTaken {
            return try store.write { (tx: Writes) in try Self.apply(batch, tx: tx) }
        }
    }

    /// What an import writes: accounts and their identities.
    typealias Writes = any AccountWriter & ProviderIdentityWriter

    private static func apply(_ batch: [(line: Int, imported: ImportedAccount)], tx: Writes) throws -> BatchOutcome {
        var outcome = BatchOutcome()
        for (line, row) in batch {
            var account = row.account
            if try tx.account(uid: account.uid) != nil {
                outcome.skipped += 1
            } else if let email = account.email, try tx.account(address: email) != nil {
                outcome.conflicts.append(.init(line: line, reason: "address held by another account"))
            } else if try row.identities.contains(where: { try tx.providerIdentity(provider: $0.provider, subject: $0.subject) != nil }) {
                // The uid is new, so whoever holds the identity is another account (or an earlier
                // row of this file): never moved to this one.
                outcome.conflicts.append(.init(line: line, reason: "identity linked to another account"))
            } else {
                if account.dropUnprovedPassword() { outcome.passwordsDropped += 1 }
                try tx.insertAccount(account)
                for identity in row.identities {
                    // Checked free above and at most one per provider (``ImportedAccount/link``),
                    // in this transaction: a refusal here is a store that broke its contract.
                    guard try tx.insertProviderIdentity(identity) else { throw StoreError.duplicate("provider identity") }
                }
                outcome.imported += 1
            }
        }
        return outcome
    }
}

/// What one batch did.
struct BatchOutcome: Sendable {
    var imported = 0
    var skipped = 0
    var passwordsDropped = 0
    var conflicts: [ImportSummary.Refusal] = []
}

/// Thrown out of a dry run's transaction so that the store rolls it back.
private struct DryRun: Error {
    let outcome: BatchOutcome
}

extension ImportSummary {
    mutating func add(_ outcome: BatchOutcome) {
        imported += outcome.imported
        skipped += outcome.skipped
        passwordsDropped += outcome.passwordsDropped
        conflicts += outcome.conflicts
    }
}
