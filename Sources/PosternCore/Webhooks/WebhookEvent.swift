import Foundation
import PosternAPI

/// Something that happened to an account or a session that the operator's backend is told about
/// by webhook. Payloads are thin: ids, kinds and times — never a code, link, token or password;
/// an address only where the receiver needs it to keep its own records (`user.created`,
/// `user.anonymous_upgraded`, `user.email_changed`, `user.email_recovered`: the account's address
/// now; `mail.failed`: the address given up on, so the backend can ask its user for another).
public enum WebhookEvent: Sendable, Hashable {
    /// An account was created: by a sign-in link, a confirmed sign-up, an anonymous sign-in, or a
    /// first sign-in by phone. `byPhone`: by a phone sign-in (no address, not anonymous).
    case userCreated(uid: String, email: EmailAddress?, byPhone: Bool = false)
    /// A session was issued by a sign-in (`method`: `emailLink`, `password`, `anonymous`, `phone`).
    case userSignedIn(uid: String, method: String)
    /// An anonymous account got an address, or a phone number by a phone sign-in (`email` nil):
    /// it keeps its uid.
    case userAnonymousUpgraded(uid: String, email: EmailAddress?)
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
    /// The account's address was proved (a verification link, or an operator said so).
    case userEmailVerified(uid: String)
    /// A recovery link put the account's previous address back (its sessions are revoked).
    case userEmailRecovered(uid: String, email: EmailAddress)
    /// The profile changed: `fields` names what (`displayName`, `attributes`), never the values.
    case userProfileUpdated(uid: String, fields: [String])
    /// An operator disabled the account (its sessions are revoked).
    case userDisabled(uid: String)
    /// Sessions ended: `reason` is `signOut` (one session's refresh family), `passwordChanged`,
    /// `passwordReset`, `emailChanged`, `emailRecovered` or `disabled` (every session of the account).
    case sessionRevoked(uid: String, reason: String)
    /// A message was accepted by the mail server (`kind`: the mail's intent, `signIn`, …).
    case mailSent(messageID: Int64, kind: String, attempts: Int)
    /// An attempt failed and the message will be tried again.
    case mailDeferred(messageID: Int64, kind: String, attempts: Int, retryAt: Int64)
    /// The message was given up on: a permanent refusal, or out of time.
    case mailFailed(messageID: Int64, kind: String, attempts: Int, email: EmailAddress)
    /// A delivery report came back for a sent message: a permanent failure (`reason` `bounced`,
    /// `status` 5.x.x) or an abuse report (`complaint`, `status` its feedback type); the address is
    /// suppressed, so it is given, as for `mail.failed`.
    case mailBounced(messageID: Int64, kind: String, reason: String, status: String, email: EmailAddress)
    /// `postern webhooks test`: a delivery check for one endpoint.
    case webhookTest(endpointID: String)

    /// A phone number became the account's: its holder and its owner both agreed (and, if another
    /// account held it, that one released it or the cool-off passed).
    case phoneVerified(uid: String, claimID: String)
    /// An identity provider's account was linked to the account (`provider`: its name in the
    /// providers file, as the account's `providers` list names it): by a sign-in with it, or by
    /// `POST /v1/me/providers`.
    case userProviderLinked(uid: String, provider: String)
    /// An identity provider's account was unlinked: by the owner (`DELETE /v1/me/providers/{provider}`),
    /// or by the provider (`by` is `owner` or `provider`: Apple's notice that consent was withdrawn or
    /// the Apple ID deleted).
    case userProviderUnlinked(uid: String, provider: String, by: String)
    /// A phone claim of the account ended: deleted by its owner or the number's holder, objected
    /// to, or the number moved to another account.
    case phoneRemoved(uid: String, claimID: String)

    /// Every event type, as `type` names it (the documentation's list).
    public static let types = WebhookEndpointRequestBody.eventTypes


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
        case .userEmailVerified: "user.email_verified"
        case .userEmailRecovered: "user.email_recovered"
        case .userProfileUpdated: "user.profile_updated"
        case .userDisabled: "user.disabled"
        case .sessionRevoked: "session.revoked"
        case .mailSent: "mail.sent"
        case .mailDeferred: "mail.deferred"
        case .mailFailed: "mail.failed"
        case .mailBounced: "mail.bounced"
        case .webhookTest: "webhook.test"
        case .phoneVerified: "phone.verified"
        case .phoneRemoved: "phone.removed"
        case .userProviderLinked: "user.provider_linked"
        case .userProviderUnlinked: "user.provider_unlinked"
        }
    }

    /// The event's `data` object.
    public var data: [String: JSONValue] {
        switch self {
        case .userCreated(let uid, let email, let byPhone):
            ["uid": .string(uid), "anonymous": .bool(email == nil && !byPhone), "email": email.map { .string($0.address) } ?? .null]
        case .userSignedIn(let uid, let method): ["uid": .string(uid), "method": .string(method)]
        case .userAnonymousUpgraded(let uid, let email): ["uid": .string(uid), "email": email.map { .string($0.address) } ?? .null]
        case .userMigrated(let fromUid, let toUid): ["fromUid": .string(fromUid), "toUid": .string(toUid)]
        case .userEmailChanged(let uid, let email): ["uid": .string(uid), "email": .string(email.address)]
        case .userPasswordChanged(let uid), .userPasswordReset(let uid), .userDeleted(let uid),
            .sessionRefreshReuseDetected(let uid), .userEmailVerified(let uid), .userDisabled(let uid):
            ["uid": .string(uid)]
        case .userEmailRecovered(let uid, let email): ["uid": .string(uid), "email": .string(email.address)]
        case .userProfileUpdated(let uid, let fields): ["uid": .string(uid), "fields": .array(fields.map { .string($0) })]
        case .sessionRevoked(let uid, let reason): ["uid": .string(uid), "reason": .string(reason)]
        case .mailSent(let id, let kind, let attempts):
            ["messageId": .integer(id), "kind": .string(kind), "attempts": .integer(Int64(attempts))]
        case .mailDeferred(let id, let kind, let attempts, let retryAt):
            [
                "messageId": .integer(id), "kind": .string(kind), "attempts": .integer(Int64(attempts)),
                "retryAt": .string(UTCTimestamp.iso8601(retryAt)),
            ]
        case .mailFailed(let id, let kind, let attempts, let email):
            [
                "messageId": .integer(id), "kind": .string(kind), "attempts": .integer(Int64(attempts)),
                "email": .string(email.address),
            ]
        case .mailBounced(let id, let kind, let reason, let status, let email):
            [
                "messageId": .integer(id), "kind": .string(kind), "reason": .string(reason), "status": .string(status),
                "email": .string(email.address),
            ]
        case .webhookTest(let endpointID): ["endpointId": .string(endpointID)]
        case .phoneVerified(let uid, let claimID), .phoneRemoved(let uid, let claimID):
            ["uid": .string(uid), "claimId": .string(claimID)]
        case .userProviderLinked(let uid, let provider): ["uid": .string(uid), "provider": .string(provider)]
        case .userProviderUnlinked(let uid, let provider, let by): ["uid": .string(uid), "provider": .string(provider), "by": .string(by)]
        }
    }

    /// The request body, the Standard Webhooks envelope: `{"data":…,"timestamp":…,"type":…}` with
    /// sorted keys, `timestamp` the event's time in ISO 8601 UTC.
    public func body(at time: Int64) -> String {
        JSONValue.object(["type": .string(type), "timestamp": .string(UTCTimestamp.iso8601(time)), "data": .object(data)]).sortedJSONText
    }
}
