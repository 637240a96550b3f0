/// One named step of a dialect's schema, as GRDB registers one (`registerMigration("name")`).
///
/// A dialect lists every name of ``Migration/names``, in that order: a step added to one dialect
/// only fails `MigrationNameTests`. Where a dialect needs no statements for a step (its history
/// made the tables another way) it says so with ``notNeeded(_:because:)``: the step is named, not
/// run and not counted, so the version a database records (SQLite's `PRAGMA user_version`,
/// PostgreSQL's `postern_migrations`) stays the number of steps with statements it ran.
public struct Migration: Sendable, Hashable {
    /// The step's name, one of ``Migration/names``.
    public let name: String
    /// The statements, run in one transaction; nil where this dialect needs none.
    public let sql: String?
    /// Why this dialect needs no statements for the step (nil when it has some).
    public let notNeededBecause: String?

    /// A step that runs `sql`.
    public init(_ name: String, _ sql: String) {
        self.name = name
        self.sql = sql
        notNeededBecause = nil
    }

    private init(name: String, reason: String) {
        self.name = name
        sql = nil
        notNeededBecause = reason
    }

    /// A step this dialect needs no statements for, and why.
    public static func notNeeded(_ name: String, because reason: String) -> Migration { Migration(name: name, reason: reason) }

    /// Every step's name, in the order both dialects apply them. Append; never rename or reorder
    /// a name that has shipped.
    public static let names: [String] = [
        "foundation",
        "outbox",
        "outboxWithoutLists",
        "guessBudgets",
        "approvalOnOtherDevice",
        "refreshTokensByExpiry",
        "webhookDeliveries",
        "heartbeats",
        "clientRate",
        "webhookEndpoints",
        "deliveryLog",
        "bounces",
        "smsOutbox",
        "phoneClaims",
        "phoneSignIns",
        "browserBound",
        "deliveryLogWithoutLists",
        "deliveryLogWithoutRecipientIndex",
        "claimNumbers",
        "oidcCodes",
        "refreshTokenClients",
        "oidcClientsAndSessions",
        "oidcClientSigningAlgorithm",
        "providerIdentities",
        "accountsNewestFirst",
        "suppressionsNewestFirst",
        "sessionsAndActivity",
    ]
}

extension Array where Element == Migration {
    /// The statements of the steps that have some, in order: version `n` of a database is the
    /// first `n` of them run.
    public var versions: [String] { compactMap(\.sql) }
}
