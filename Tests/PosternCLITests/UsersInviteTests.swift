import Foundation
import PosternAssembly
import PosternCore
@testable import PosternCLI
import Testing

/// `postern users invite ADDR`: usage errors before anything is opened; over a SQLite file, an
/// invitation queued, and an address that has an account told (exit 65) with nothing queued.
@Suite("postern users invite")
struct UsersInviteTests {
    @Test("usage errors name what to fix", arguments: [
        (["users", "invite"], "users invite takes one address"),
        (["users", "invite", "a@example.com", "b@example.com"], "users invite takes one address"),
        (["users", "invite", "a@example.com", "--uid", "u1"], "--uid is not for users invite"),
    ])
    func usage(arguments: [String], says: String) {
        let message = ParsedCommand.usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "accepted")")
    }

    @Test("over a SQLite file: an invitation mail is queued; an address with an account exits 65 and queues nothing")
    func invites() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-users-invite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("postern.db").path
        var settings = Settings()
        settings.database = database
        do {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            try storage.store.write { try $0.insertAccount(Account(uid: "member", email: try EmailAddress.parse("member@example.com"), createdAt: 1)) }
        }
        #expect(try ParsedCommand.command(["users", "invite", "Guest@Example.com", "--sign-up", "closed", "--database", database], as: UsersCommand.self).run() == 0)
        #expect(throws: CommandFailure.self) {
            try ParsedCommand.command(["users", "invite", "member@example.com", "--database", database], as: UsersCommand.self).run()
        }
        do {
            _ = try ParsedCommand.command(["users", "invite", "member@example.com", "--database", database], as: UsersCommand.self).run()
        } catch let failure as CommandFailure {
            #expect(failure.code == .badInput && failure.message.contains("EMAIL_EXISTS"))
        }
        let storage = try PosternStorage(settings: settings)
        defer { storage.store.close() }
        let messages = try storage.store.read { try $0.outboxMessages(state: nil, limit: 10) }
        #expect(messages.map(\.intent.name) == ["invitation"] && messages.first?.recipient.address == "Guest@example.com")
    }
}
