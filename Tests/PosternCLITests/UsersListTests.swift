import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
@testable import PosternCLI
import Testing

/// `postern users list`: usage errors before anything is opened, and a streamed walk over a
/// SQLite file that crosses pages (more users than one page holds).
@Suite("postern users list")
struct UsersListTests {
    @Test("usage errors name what to fix", arguments: [
        (["users", "list", "extra"], "users list takes no argument"),
        (["users", "list", "--limit", "0"], "--limit takes a number from 1"),
        (["users", "list", "--limit", "x"], "--limit takes a number from 1"),
        (["users", "list", "--query", ""], "--query takes a uid"),
        (["users", "list", "--email", "a@example.com"], "--email is not for users list"),
    ])
    func usage(arguments: [String], says: String) {
        let message = ParsedCommand.usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "accepted")")
    }

    @Test("--help shows list and its options")
    func help() throws {
        guard case .help(let text) = try Invocation.parse(["users", "--help"]) else {
            Issue.record("not help")
            return
        }
        #expect(text.contains("postern users list [--query Q] [--limit N] [--json]") && text.contains("JSON Lines"))
    }

    @Test("over a SQLite file: every user once newest first across pages of 1000, --limit, --query, JSON Lines of Users")
    func streams() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-users-list-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        // 2,345 users, seven to a second (ties cross the pages' edges).
        let count = 2_345
        do {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            try storage.store.write { tx in
                for index in 0..<count {
                    let uid = String(format: "u%05d", index)
                    try tx.insertAccount(Account(uid: uid, email: try EmailAddress.parse("\(uid)@example.com"), createdAt: 1_700_000_000 + Int64(index / 7)))
                }
            }
        }
        let flows = try PosternFlows(settings: settings)
        defer { flows.storage.store.close() }
        var lines: [String] = []
        let printed = try UsersList.stream(flows.service.operators, matching: nil, limit: nil, json: false) { lines.append($0) }
        #expect(printed == count && lines.count == count)
        #expect(lines.map { String($0.prefix { $0 != "\t" }) } == (0..<count).reversed().map { String(format: "u%05d", $0) })
        #expect(lines.first == "u02344\tu02344@example.com\t\(UTCTimestamp.iso8601(1_700_000_000 + 2_344 / 7))\t-")
        var limited: [String] = []
        #expect(try UsersList.stream(flows.service.operators, matching: nil, limit: 1_500, json: false) { limited.append($0) } == 1_500)
        #expect(limited == Array(lines.prefix(1_500)))
        var json: [String] = []
        #expect(try UsersList.stream(flows.service.operators, matching: UserQuery("U0001"), limit: nil, json: true) { json.append($0) } == 10)
        let users = try json.map { try JSONDecoder().decode(UserBody.self, from: Data($0.utf8)) }
        #expect(users.map(\.uid) == (10..<20).reversed().map { String(format: "u%05d", $0) })
        #expect(try ParsedCommand.command(["users", "list", "--query", "u00001", "--database", settings.database], as: UsersCommand.self).run() == 0)
    }
}
