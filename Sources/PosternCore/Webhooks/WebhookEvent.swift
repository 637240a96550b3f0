import Foundation
import PosternAPI

/// Something that happened to an account or a session that the operator's backend is told about
/// by webhook. Payloads are thin: ids, kinds and times — never a code, link, token or password;
/// an address only where the receiver needs it to keep its own records (`user.created`,
/// `user.anonymous_upgraded`, `user.email_changed`: the account's new address).
public enum WebhookEvent: Sendable, Hashable {
    /// An account was created: by a sign-in link, a confirmed sign-up, or an anonymous sign-in.
    case userCreated(uid: String, email: EmailAddress?)
    /// A session was issued by a sign-in (`method`: `emailLink`, `password`, `anonymous`).
    case userSignedIn(uid: String, method: String)
    /// An anonymous account got an address (it keeps its uid).
    case userAnonymousUpgraded(uid: String, email: EmailAddress)
    /// An anonymous session signed in to an existing account: `fromUid` is gone, `toUid` goes on.
    case userMigrated(fromUid: String, toUid: String)
    /// The account's address changed (a confirmed change, or a sign-in link that linked a new one).
    case userEmailChanged(uid: String, email: EmailAddress)
    /// The signed-in owner set or changed the password.
    case userPasswordChanged(uid: String)
    /// The password was set by a reset link.
    case userPasswordReset(uid: String)
    /// The account was deleted (by its owner or an operator).
    case userDeleted(uid: String)
    /// A refresh token was presented again after its exchange: the family is revoked.
    case sessionRefreshReuseDetected(uid: String)
    /// A phone number became the account's: its holder and its owner both agreed (and, if another
    /// account held it, that one released it or the cool-off passed).
    case phoneVerified(uid: String, claimID: String)
    /// A phone claim of the account ended: deleted by its owner or the number's holder, objected
    /// to, or the number moved to another account.
    case phoneRemoved(uid: String, claimID: String)

    /// Every event type, as `type` names it (the documentation's list).
    public static let types = [
        "user.created", "user.signed_in", "user.anonymous_upgraded", "user.migrated", "user.email_changed",
        "user.password_changed", "user.password_reset", "user.deleted", "session.refresh_reuse_detected",
        "phone.verified", "phone.removed",
    ]

    /// The event type (`user.created`, …).
    public var type: String {
        switch self {
        case .userCreated: "user.created"
        case .userSignedIn: "user.signed_in"
        case .userAnonymousUpgraded: "user.anonymous_upgraded"
        case .userMigrated: "user.migrated"
        case .userEmailChanged: "user.email_changed"
        case .userPasswordChanged: "user.password_changed"
        case .userPasswordReset: "user.password_reset"
        case .userDeleted: "user.deleted"
        case .sessionRefreshReuseDetected: "session.refresh_reuse_detected"
        case .phoneVerified: "phone.verified"
        case .phoneRemoved: "phone.removed"
        }
    }

    /// The event's `data` object.
    public var data: [String: JSONValue] {
        switch self {
        case .userCreated(let uid, let email):
            ["uid": .string(uid), "anonymous": .bool(email == nil), "email": email.map { .string($0.address) } ?? .null]
        case .userSignedIn(let uid, let method): ["uid": .string(uid), "method": .string(method)]
        case .userAnonymousUpgraded(let uid, let email): ["uid": .string(uid), "email": .string(email.address)]
        case .userMigrated(let fromUid, let toUid): ["fromUid": .string(fromUid), "toUid": .string(toUid)]
        case .userEmailChanged(let uid, let email): ["uid": .string(uid), "email": .string(email.address)]
        case .userPasswordChanged(let uid), .userPasswordReset(let uid), .userDeleted(let uid),
            .sessionRefreshReuseDetected(let uid):
            ["uid": .string(uid)]
        case .phoneVerified(let uid, let claimID), .phoneRemoved(let uid, let claimID):
            ["uid": .string(uid), "claimId": .string(claimID)]
        }
    }

    /// The request body, the Standard Webhooks envelope: `{"data":…,"timestamp":…,"type":…}` with
    /// sorted keys, `timestamp` the event's time in ISO 8601 UTC.
    /// - Throws: `StoreError.corrupt` when the body cannot be encoded (it always can).
    public func body(at time: Int64) throws -> String {
        let envelope: JSONValue = .object([
            "type": .string(type), "timestamp": .string(UTCTimestamp.iso8601(time)), "data": .object(data),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let text = String(data: try encoder.encode(envelope), encoding: .utf8) else {
            throw StoreError.corrupt("webhook body")
        }
        return text
    }
}
