import Foundation
import PosternAssembly
import PosternCore
@testable import PosternCLI
import Testing

/// `postern suppressions list|remove`: usage errors before anything is opened, what list prints
/// (a line per address, or the admin API's body), and a run over a SQLite file.
@Suite("postern suppressions")
struct SuppressionsCommandTests {
    func usageError(_ arguments: [String]) -> String? { ParsedCommand.usageError(arguments) }

    func command(_ arguments: [String]) throws -> SuppressionsCommand { try ParsedCommand.command(arguments, as: SuppressionsCommand.self) }

    @Test("usage errors name what to fix", arguments: [
        (["suppressions"], "suppressions needs list or remove"),
        (["suppressions", "show"], "suppressions needs list or remove"),
        (["suppressions", "list", "extra"], "suppressions list takes no argument"),
        (["suppressions", "remove"], "suppressions remove needs one ADDR"),
        (["suppressions", "remove", "a@example.com", "b@example.com"], "suppressions remove needs one ADDR"),
        (["suppressions", "remove", "a@example.com", "--json"], "--json is for suppressions list"),
        (["suppressions", "remove", "a@example.com", "--email", "b@example.com"], "--email is for suppressions list"),
        (["suppressions", "list", "--name", "x"], "--name is an option of `postern oidc"),
    ])
    func usage(arguments: [String], says: String) {
        let message = usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "accepted")")
    }

    @Test("--help names both actions, the three reasons and what lifts a suppression")
    func help() throws {
        guard case .help(let text) = try Invocation.parse(["suppressions", "--help"]) else {
            Issue.record("not help")
            return
        }
        for part in [
            "postern suppressions list [--email ADDR] [--json]", "postern suppressions remove ADDR", "bounce", "complaint", "rejected",
            "a complaint stays", "--database",
        ] {
            #expect(text.contains(part), "\(part)")
        }
    }

    @Test("list prints address, reason, time and detail a line each, or the admin API's body")
    func output() {
        let listed = [
            Suppression(address: "ann@example.com", reason: .complaint, detail: "abuse", suppressedAt: 1_738_324_800),
            Suppression(address: "bob@example.com", reason: .rejected, detail: "550 no", suppressedAt: 1_738_324_700),
        ]
        #expect(SuppressionsCommand.describe(listed, json: false)
            == "ann@example.com\tcomplaint\t2025-01-31T12:00:00Z\tabuse\nbob@example.com\trejected\t2025-01-31T11:58:20Z\t550 no")
        #expect(SuppressionsCommand.describe(Array(listed.prefix(1)), json: true)
            == #"{"suppressions":[{"detail":"abuse","email":"ann@example.com","reason":"complaint","suppressedAt":"2025-01-31T12:00:00Z"}]}"#)
        #expect(SuppressionsCommand.describe([], json: false) == "no suppressed addresses")
        #expect(SuppressionsCommand.describe([], json: false, one: true) == "not suppressed")
    }

    @Test("run over a SQLite file: list and list --email read it, remove lifts one, an address not suppressed exits 65")
    func runs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-suppressions-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = ["--database", directory.appendingPathComponent("postern.db").path]
        var settings = Settings()
        settings.database = database[1]
        let ann = EmailAddress.restored(localPart: "ann", domain: "example.com")
        func stored() throws -> [Suppression] {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            return try storage.store.read { try $0.suppressions(after: nil, limit: 10) }
        }
        do {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            try storage.store.write { tx in
                try tx.suppress(ann, reason: SuppressionReason.bounce.stored("5.1.1"), now: 100)
                try tx.suppress(EmailAddress.restored(localPart: "bob", domain: "example.com"), reason: "complaint: abuse", now: 101)
            }
        }
        #expect(try command(["suppressions", "list"] + database).run() == 0)
        #expect(try command(["suppressions", "list", "--email", "ANN@example.com", "--json"] + database).run() == 0)
        #expect(try command(["suppressions", "remove", "Ann@example.com"] + database).run() == 0)
        #expect(try stored().map(\.address) == ["bob@example.com"])
        let again = #expect(throws: CommandFailure.self) { try command(["suppressions", "remove", "ann@example.com"] + database).run() }
        #expect(again?.code == .badInput && again?.message.contains("is not suppressed") == true)
        let invalid = #expect(throws: (any Error).self) { try command(["suppressions", "remove", "not an address"] + database).run() }
        #expect(invalid != nil)
    }
}
