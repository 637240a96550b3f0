@testable import PosternPostgres
import PosternSQL
@testable import PosternStore
import Testing

/// Both dialects define the one list of migration names (``Migration/names``), in its order, so a
/// step added to one of them only fails here; and the versions databases recorded keep their
/// numbers.
@Suite("Named migrations")
struct MigrationNameTests {
    @Test("SQLite defines every name, in order, each with statements")
    func sqliteNames() {
        #expect(Schema.named.map(\.name) == Migration.names)
        #expect(Schema.named.allSatisfy { $0.sql != nil })
    }

    @Test("PostgreSQL defines every name, in order, those without statements saying why")
    func postgresNames() {
        #expect(PostgresSchema.named.map(\.name) == Migration.names)
        #expect(PostgresSchema.named.allSatisfy { ($0.sql == nil) != ($0.notNeededBecause == nil) })
    }

    /// The version a database records after each named step: the count of steps with statements.
    func version(after name: String, in named: [Migration]) -> Int? {
        guard let index = named.firstIndex(where: { $0.name == name }) else { return nil }
        return Array(named[...index]).versions.count
    }

    @Test("the versions shipped keep their numbers: SQLite's user_version and PostgreSQL's postern_migrations")
    func numberingUnchanged() {
        #expect(Schema.migrations.count >= 19 && PostgresSchema.migrations.count >= 15)
        #expect(version(after: "guessBudgets", in: Schema.named) == 4)
        #expect(version(after: "guessBudgets", in: PostgresSchema.named) == 1)
        #expect(version(after: "approvalOnOtherDevice", in: PostgresSchema.named) == 2)
        #expect(version(after: "deliveryLogWithoutLists", in: Schema.named) == 17)
        #expect(version(after: "deliveryLogWithoutRecipientIndex", in: PostgresSchema.named) == 14)
        #expect(version(after: "claimNumbers", in: Schema.named) == 19)
        #expect(version(after: "claimNumbers", in: PostgresSchema.named) == 15)
        #expect(version(after: "oidcCodes", in: Schema.named) == 20)
        #expect(version(after: "oidcCodes", in: PostgresSchema.named) == 16)
        #expect(version(after: "refreshTokenClients", in: Schema.named) == 21)
        #expect(version(after: "refreshTokenClients", in: PostgresSchema.named) == 17)
        #expect(version(after: "oidcClientsAndSessions", in: Schema.named) == 22)
        #expect(version(after: "oidcClientsAndSessions", in: PostgresSchema.named) == 18)
        #expect(version(after: "oidcClientSigningAlgorithm", in: Schema.named) == 23)
        #expect(version(after: "oidcClientSigningAlgorithm", in: PostgresSchema.named) == 19)
        #expect(version(after: "providerIdentities", in: Schema.named) == 24)
        #expect(version(after: "providerIdentities", in: PostgresSchema.named) == 20)
        #expect(Schema.migrations == Schema.named.compactMap(\.sql))
    }
}
