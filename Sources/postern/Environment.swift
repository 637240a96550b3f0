import Foundation
import PosternCore
import PosternCrypto
import PosternStore

/// What every command that touches state opens: the store, the master key, the key ring.
struct Environment {
    let settings: Settings
    let store: SQLiteStore
    let keys: KeyRingManager
    let logger: Logger

    init(_ settings: Settings, label: String) throws(CommandFailure) {
        self.settings = settings
        logger = Logger(label: label) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        do {
            store = try SQLiteStore(path: settings.database)
            let box = try MasterKeyFile.loadOrCreate(at: MasterKeyFile.path(forDatabase: settings.database))
            keys = KeyRingManager(
                store: store, box: box, clock: SystemClock(), maxCodeLifetime: settings.longestCodeLifetime)
        } catch let error as StoreError {
            throw CommandFailure(code: .unavailable, message: error.description)
        } catch {
            throw CommandFailure(code: .internalError, message: "\(error)")
        }
    }
}
