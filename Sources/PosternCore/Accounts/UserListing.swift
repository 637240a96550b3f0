import PosternCrypto

/// A position in the newest-first listing of accounts (by creation time, then uid, both
/// descending, so that the order is total): the page after it holds the rows that sort after it.
public struct UserCursor: Sendable, Hashable {
    public var createdAt: Int64
    public var uid: String

    /// The position of the account `uid` created at `createdAt`.
    public init(createdAt: Int64, uid: String) {
        self.createdAt = createdAt
        self.uid = uid
    }

    /// The opaque text the admin API and the CLI hand out (`nextCursor`): ``CursorText`` of the
    /// time and the uid.
    public var text: String { CursorText.encode(createdAt, uid) }

    /// The cursor `text` names; nil when it is not one of ours.
    public init?(text: String) {
        guard let (at, uid) = CursorText.decode(text) else { return nil }
        self.init(createdAt: at, uid: uid)
    }

    /// Whether the account `uid` created at `createdAt` sorts after this cursor (newest first).
    public func precedes(createdAt at: Int64, uid other: String) -> Bool {
        at < createdAt || (at == createdAt && other < uid)
    }
}

/// The text of a keyset cursor (the admin lists' and the activity's `nextCursor`): base64url of
/// `<seconds> <key>`, the last row's time and its tie-breaking key. Opaque to clients; any text
/// not of this shape is no cursor.
enum CursorText {
    /// The text of the position (`at`, `key`).
    static func encode(_ at: Int64, _ key: String) -> String { Base64URL.encode(Array("\(at) \(key)".utf8)) }

    /// The position `text` names: a time of 0 or more and a key that is not empty; nil otherwise.
    static func decode(_ text: String) -> (Int64, String)? {
        guard text.utf8.count <= 1024, let bytes = Base64URL.decode(text), let decoded = String(validating: bytes, as: UTF8.self),
            let space = decoded.firstIndex(of: " "), let at = Int64(decoded[..<space]), at >= 0
        else { return nil }
        let key = String(decoded[decoded.index(after: space)...])
        return key.isEmpty ? nil : (at, key)
    }
}

/// Which accounts a listing keeps: the one whose uid is the text, and those whose normalized
/// address starts with it lower-cased (compared as text: `%` and `_` are characters, not
/// wildcards).
public struct UserQuery: Sendable, Hashable {
    /// An exact uid.
    public var uid: String
    /// The start of a normalized address (lower-cased: the stored form's local part is, and its
    /// domain is in A-labels).
    public var addressPrefix: String

    /// The query `text` as the admin API and the CLI take it.
    public init(_ text: String) {
        uid = text
        addressPrefix = text.lowercased()
    }

    /// Whether the account `uid` with the normalized address `normalized` is kept.
    public func matches(uid other: String, normalized: String?) -> Bool {
        other == uid || normalized?.hasPrefix(addressPrefix) == true
    }
}

/// One page of the newest-first listing of accounts, and where the next starts (nil on the last).
public struct UserPage: Sendable, Hashable {
    public var users: [UserRecord]
    public var next: UserCursor?

    /// A page of `users`, the next starting after `next`.
    public init(users: [UserRecord], next: UserCursor?) {
        self.users = users
        self.next = next
    }
}
