import Foundation
import PosternAssembly
import PosternCore
import Testing

/// A connection string libpq cannot read is refused as one: never opened as a SQLite file named
/// after it (created in the working directory, its error message showing the password).
@Suite("The --database setting")
struct DatabaseSettingTests {
    @Test("an unreadable PostgreSQL URL is refused without its password and creates no file", arguments: [
        "postgres://app:50%off-Secret@db.example.com/postern", "postgresql://app:50%off-Secret@db.example.com/postern",
        "host=db.example.com password='50%off-Secret dbname=postern",
    ])
    func unreadableConnectionString(_ text: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-db-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: text)
        }
        var settings = Settings()
        settings.database = text
        settings.masterKeyFile = directory.appendingPathComponent("postern.key").path
        let error = #expect(throws: StartupError.self) { _ = try PosternStorage(settings: settings) }
        let message = String(describing: error)
        #expect(message.contains("cannot be read"), "\(message)")
        #expect(!message.contains("50%off-Secret"), "\(message)")
        #expect(!PosternStorage.describe(database: text).contains("50%off-Secret"))
        #expect(!FileManager.default.fileExists(atPath: text), "no SQLite file was made of it")
    }
}
