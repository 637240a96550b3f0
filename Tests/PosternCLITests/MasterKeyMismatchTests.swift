import Foundation
import PosternAssembly
import PosternCore
import Testing

/// A daemon started with another master key than the one the database's keys were sealed with
/// says which key file it read and what to do, where it said only "authentication failed".
@Suite("Another master key than the database's")
struct MasterKeyMismatchTests {
    @Test("the error names the key file used, the default beside the database and --master-key-file, never the keys")
    func namesTheKeyFileAndTheFix() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = Settings()
        settings.database = directory.appendingPathComponent("postern.db").path
        let first = try PosternStorage(settings: settings)
        _ = try first.openKeys()
        first.store.close()

        let other = directory.appendingPathComponent("other.key").path
        settings.masterKeyFile = other
        let second = try PosternStorage(settings: settings)
        defer { second.store.close() }
        let error = #expect(throws: StartupError.self) { _ = try second.openKeys() }
        let message = String(describing: error)
        #expect(message.contains(other), "\(message)")
        #expect(message.contains("--master-key-file"), "\(message)")
        #expect(message.contains("POSTERN_MASTER_KEY_FILE"), "\(message)")
        #expect(message.contains("postern.key"), "\(message)")
        #expect(message.contains("same key"), "\(message)")
        #expect(error?.exitCode == 69)
        for keyFile in [other, directory.appendingPathComponent("postern.key").path] {
            let key = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!message.lowercased().contains(key.prefix(16)), "no key material")
        }
    }
}
