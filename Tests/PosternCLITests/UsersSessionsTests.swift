import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
@testable import PosternCLI
import Testing

/// `postern users sessions` and `postern users activity`: usage errors before anything is
/// opened, and the lines over a SQLite file.
@Suite("postern users sessions and activity")
struct UsersSessionsTests {
    @Test("usage errors name what to fix", arguments: [
        (["users", "sessions"], "users sessions takes the user's UID"),
        (["users", "activity", "u1", "extra"], "users activity takes the user's UID"),
        (["users", "activity", "u1", "--revoke", "s1"], "--revoke is for users sessions"),
        (["users", "sessions", "u1", "--limit", "3"], "--limit is for users activity"),
        (["users", "activity", "u1", "--limit", "0"], "--limit takes a number from 1"),
    ])
    func usage(arguments: [String], says: String) {
        let message = ParsedCommand.usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "accepted")")
    }

    @Test("over a SQLite file: the sessions' and the activity's lines, JSON Lines, --limit across pages, and --revoke")
    func lines() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-users-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        let at: Int64 = 1_700_000_000
        do {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            try storage.store.write { tx in
                try tx.insertAccount(Account(uid: "u1", email: try EmailAddress.parse("u1@example.com"), createdAt: at))
                try tx.insertDeviceSession(DeviceSession(
                    id: "s1", uid: "u1", family: "f1", deviceName: "Firefox on Linux", network: "198.51.100.0/24", method: "password",
                    createdAt: at, lastUsedAt: at + 60, expiresAt: 4_000_000_000))
                try tx.insertDeviceSession(DeviceSession(
                    id: "s2", uid: "u1", family: "f2", deviceName: nil, network: nil, method: "oidc:openid", clientID: "grafana",
                    createdAt: at + 1, lastUsedAt: at + 1, expiresAt: 4_000_000_000))
                for index in 0..<150 {
                    try tx.recordActivity(ActivityEntry(uid: "u1", at: at + Int64(index), kind: "signIn", method: "password", deviceName: "Firefox on Linux", network: "198.51.100.0/24"))
                }
            }
        }
        let flows = try PosternFlows(settings: settings)
        defer { flows.storage.store.close() }
        let sessions = try flows.service.operators.sessions(uid: "u1")
        #expect(sessions.map { UsersSessions.line($0, json: false) } == [
            "s2\t-\t-\toidc:openid (grafana)\t\(UTCTimestamp.iso8601(at + 1))\t\(UTCTimestamp.iso8601(at + 1))",
            "s1\tFirefox on Linux\t198.51.100.0/24\tpassword\t\(UTCTimestamp.iso8601(at))\t\(UTCTimestamp.iso8601(at + 60))",
        ])
        let body = try JSONDecoder().decode(DeviceSessionBody.self, from: Data(UsersSessions.line(sessions[1], json: true).utf8))
        #expect(body.id == "s1" && body.current == false && body.clientId == nil)
        var lines: [String] = []
        #expect(try UsersSessions.streamActivity(flows.service.operators, uid: "u1", limit: nil, json: false) { lines.append($0) } == 150)
        #expect(lines.first == "\(UTCTimestamp.iso8601(at + 149))\tsignIn\tpassword\tFirefox on Linux\t198.51.100.0/24")
        var limited: [String] = []
        #expect(try UsersSessions.streamActivity(flows.service.operators, uid: "u1", limit: 120, json: true) { limited.append($0) } == 120)
        #expect(try JSONDecoder().decode(ActivityEntryBody.self, from: Data(limited[119].utf8)).at == UTCTimestamp.iso8601(at + 30))
        #expect(try ParsedCommand.command(["users", "sessions", "u1", "--revoke", "s1", "--database", settings.database], as: UsersCommand.self).run() == 0)
        #expect(try flows.service.operators.sessions(uid: "u1").map(\.id) == ["s2"])
        #expect(throws: (any Error).self) {
            try ParsedCommand.command(["users", "sessions", "u1", "--revoke", "s1", "--database", settings.database], as: UsersCommand.self).run()
        }
    }
}
