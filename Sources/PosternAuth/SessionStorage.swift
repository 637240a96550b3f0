import Foundation
#if canImport(Security)
import Security
#endif

/// What the client keeps on this device between launches: the session, the PKCE verifier of the
/// link it is waiting for, and what FUAP's welcome screen may know about this device.
public struct DeviceState: Sendable, Hashable, Codable {
    /// The signed-in session, if any.
    public var session: StoredSession?
    /// The signed-in user's profile as last read, so `user` is known at launch.
    public var user: User?
    /// The link this device asked for and has not completed: its address and PKCE verifier.
    public var pendingLink: PendingLink?
    /// The address last used to sign in here.
    public var lastEmail: String?
    /// Addresses a password was set or used for on this device (lower-cased).
    public var passwordEmails: Set<String>

    public init(
        session: StoredSession? = nil, user: User? = nil, pendingLink: PendingLink? = nil, lastEmail: String? = nil,
        passwordEmails: Set<String> = []
    ) {
        self.session = session
        self.user = user
        self.pendingLink = pendingLink
        self.lastEmail = lastEmail
        self.passwordEmails = passwordEmails
    }
}

/// A session as stored: the tokens and when the ID token expires.
public struct StoredSession: Sendable, Hashable, Codable {
    public var uid: String
    public var idToken: String
    public var refreshToken: String
    /// When the ID token expires, by this device's clock.
    public var expiresAt: Date
    public var isAnonymous: Bool
    public var email: String?
}

/// A link asked for on this device and not yet completed.
public struct PendingLink: Sendable, Hashable, Codable {
    public var email: String
    /// The PKCE verifier (nil where the platform had no SHA-256).
    public var codeVerifier: String?
}

/// Where `DeviceState` lives. Implementations: `KeychainSessionStorage` (Apple platforms),
/// `FileSessionStorage` (a 0600 file), `MemorySessionStorage` (tests, previews).
public protocol SessionStorage: Sendable {
    /// The stored state, or nil when nothing is stored.
    /// - Throws: when the storage cannot be read (a corrupt file counts as nothing stored).
    func load() throws -> DeviceState?
    /// Replaces the stored state.
    /// - Throws: when the storage cannot be written.
    func save(_ state: DeviceState) throws
}

/// Keeps the state in memory only: gone when the process ends.
public final class MemorySessionStorage: SessionStorage, @unchecked Sendable {
    // `lock` guards `state`.
    private let lock = NSLock()
    private var state: DeviceState?

    public init(_ state: DeviceState? = nil) { self.state = state }

    public func load() throws -> DeviceState? { lock.withLock { state } }
    public func save(_ state: DeviceState) throws { lock.withLock { self.state = state } }
}

/// Keeps the state in a JSON file readable by its owner only (mode 0600), replaced atomically.
public struct FileSessionStorage: SessionStorage {
    /// The file.
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> DeviceState? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try? JSONDecoder().decode(DeviceState.self, from: data)
    }

    /// - Throws: a Foundation file error when the directory is not writable.
    public func save(_ state: DeviceState) throws {
        let data = try JSONEncoder().encode(state)
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Created 0600 before a byte is written, then renamed over the old file: never readable
        // by others, never half-written.
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        // rename(2) replaces the old file in one step (FileManager's replace is not atomic on Linux).
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
    }
}

#if canImport(Security)
/// Keeps the state in the Keychain as one generic password item, readable after first unlock and
/// never synced to other devices.
public struct KeychainSessionStorage: SessionStorage {
    /// The Keychain service name (default: "Postern").
    public let service: String
    /// The account name of the item (default: "session").
    public let account: String

    public init(service: String = "Postern", account: String = "session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() throws -> DeviceState? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status: status) }
        return try? JSONDecoder().decode(DeviceState.self, from: data)
    }

    public func save(_ state: DeviceState) throws {
        let data = try JSONEncoder().encode(state)
        let update: [String: Any] = [
            kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(update) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }
}

/// A Keychain call failed with `status` (an `OSStatus`).
public struct KeychainError: Error, Sendable, Hashable {
    public let status: OSStatus
}
#endif
