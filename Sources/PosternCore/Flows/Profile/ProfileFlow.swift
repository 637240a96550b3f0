import Foundation
import PosternAPI

/// What a signed-in user does with their own account: read it, change the profile the app owns,
/// delete it.
public final class ProfileFlow: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & WebhookReader

    let context: FlowContext
    let sessions: SessionFlow

    init(context: FlowContext, sessions: SessionFlow) {
        self.context = context
        self.sessions = sessions
    }

    /// The signed-in user's record.
    /// - Throws: `AuthError.invalidIDToken`.
    public func me(idToken: String) throws(AuthError) -> UserRecord {
        UserRecord(try sessions.verifyIDToken(idToken).account)
    }

    /// Changes the display name and/or the app-owned attributes (a JSON object of at most 4 KiB).
    /// - Throws: `AuthError.invalidArgument` naming the field, `invalidIDToken`.
    public func update(idToken: String, displayName: String??, attributes: String?) throws(AuthError) -> UserRecord {
        let (account, _) = try sessions.verifyIDToken(idToken)
        if case .some(.some(let name)) = displayName { try Self.checkDisplayName(name) }
        if let attributes {
            guard attributes.utf8.count <= WireLimits.attributesMaximumBytes else { throw .invalidArgument("attributes must be at most 4 KiB of JSON.") }
            guard (try? JSONSerialization.jsonObject(with: Data(attributes.utf8))) is [String: Any] else {
                throw .invalidArgument("attributes must be a JSON object.")
            }
        }
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { (tx: Writes) in
            guard var current = try tx.account(uid: account.uid) else { throw AuthError.invalidIDToken }
            var fields: [String] = []
            if let displayName, displayName != current.displayName {
                current.displayName = displayName
                fields.append("displayName")
            }
            if let attributes, attributes != current.attributes {
                current.attributes = attributes
                fields.append("attributes")
            }
            try tx.updateAccount(current)
            if !fields.isEmpty { try events.record(.userProfileUpdated(uid: current.uid, fields: fields), tx: tx, now: now) }
            return UserRecord(current)
        }
    }

    /// Deletes the signed-in account (sign-in within the last 5 minutes).
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidIDToken`.
    public func delete(idToken: String) throws(AuthError) {
        let (account, _) = try sessions.verifyRecentSignIn(idToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { (tx: Writes) in
            try tx.deleteAccount(uid: account.uid)
            try events.record(.userDeleted(uid: account.uid), tx: tx, now: now)
        }
    }

    /// A display name is one line of at most `WireLimits.displayNameMaximumLength` code points,
    /// whoever sets it (the user or an operator).
    /// - Throws: `AuthError.invalidArgument` naming the field.
    static func checkDisplayName(_ name: String) throws(AuthError) {
        guard name.unicodeScalars.count <= WireLimits.displayNameMaximumLength, isOneLine(name) else {
            throw .invalidArgument("displayName must be one line of at most \(WireLimits.displayNameMaximumLength) characters, without control characters.")
        }
    }

    /// No control character (C0, DEL, C1: line breaks, and the NUL the store's text binding would
    /// cut the name at) and no line or paragraph separator: what every display name is, set by a
    /// user, an operator or an import, and what the contract's pattern says.
    static func isOneLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }
    }
}
