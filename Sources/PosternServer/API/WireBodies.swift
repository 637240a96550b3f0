import Foundation
import PosternAPI
import PosternCore

// The flows' values as the wire module's bodies: the one place each answer's shape is made, for
// the router and the CLI's --json alike.

extension SessionBody {
    /// The body of `session`.
    public init(_ session: Session) {
        self.init(
            uid: session.uid, idToken: session.idToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn,
            isAnonymous: session.isAnonymous, email: session.email)
    }
}

extension LoginBody {
    /// The body of `login`.
    public init(_ login: LoginDescriptor) {
        self.init(
            uid: login.uid, email: login.email, isNewUser: login.isNewUser, session: SessionBody(login.session),
            migration: login.migration.map { Migration(fromUid: $0.fromUid, toUid: $0.toUid, allowMigration: $0.allowMigration) },
            needsPassword: login.needsPassword)
    }
}

extension UserBody {
    /// The body of `user`; its stored attributes text is decoded (an unreadable one is `{}`).
    public init(_ user: UserRecord) {
        let attributes = (try? APIJSON.decode([String: JSONValue].self, from: Array(user.attributes.utf8))) ?? [:]
        self.init(
            uid: user.uid, email: user.email, emailVerified: user.emailVerified, displayName: user.displayName,
            isAnonymous: user.isAnonymous, providers: user.providers, attributes: attributes,
            createdAt: UTCTimestamp.iso8601(user.createdAt), lastSignInAt: user.lastSignInAt.map(UTCTimestamp.iso8601),
            disabled: user.disabled)
    }
}

extension OutboxMessageBody {
    /// The metadata of `message` (never its body).
    public init(_ m: OutboxMessage) {
        self.init(
            id: m.id, kind: m.intent.name, recipient: m.recipient.address, state: m.state.rawValue, attempts: m.attempts,
            nextAttemptAt: UTCTimestamp.iso8601(m.nextAttemptAt), createdAt: UTCTimestamp.iso8601(m.createdAt),
            giveUpAt: UTCTimestamp.iso8601(m.giveUpAt), finishedAt: m.finishedAt.map(UTCTimestamp.iso8601), lastReply: m.lastReply)
        bounce = m.bounce.map { BounceBody(kind: $0.kind.rawValue, status: $0.status, detail: $0.detail, at: UTCTimestamp.iso8601($0.at)) }
    }
}

extension BounceResultBody {
    /// The body of `result`.
    public init(_ result: BounceResult) {
        self.init(outcome: result.outcome.rawValue, messageId: result.messageID, status: result.status, reason: result.reason)
    }
}

extension ActionInfoBody {
    /// The body of `info`.
    public init(_ info: ActionInfo) {
        self.init(mode: info.mode.rawValue, email: info.email, expiresAt: UTCTimestamp.iso8601(info.expiresAt), continueUrl: info.continueURL)
    }
}

extension HTTPResponse {
    /// A JSON response of a wire body.
    static func body<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: APIJSON.encode(value))
    }
}

extension WebhookEndpointBody {
    /// The body of `info` (never a secret).
    public init(_ info: WebhookEndpointInfo) {
        self.init(
            id: info.id, url: info.url, events: info.filter.types ?? ["*"], source: info.source, disabled: info.disabledReason != nil,
            previousSecretUntil: info.previousSecretUntil.map(UTCTimestamp.iso8601), createdAt: info.createdAt.map(UTCTimestamp.iso8601))
    }
}

extension WebhookEndpointSecretBody {
    /// The body of an add or a rotation: the endpoint and its new secret.
    public init(_ added: WebhookEndpointSecret) {
        self.init(endpoint: WebhookEndpointBody(added.endpoint), secret: added.secret)
    }
}

extension OutboxAttemptBody {
    /// The body of one logged attempt.
    public init(_ a: OutboxAttempt) {
        self.init(
            attemptedAt: UTCTimestamp.iso8601(a.attemptedAt), durationMs: a.durationMilliseconds, transport: a.transport,
            replyCode: a.replyCode, reply: a.reply, outcome: a.outcome.rawValue)
    }
}

extension OutboxMessageDetailBody {
    /// A message (nil once purged) and its log.
    public init(id: Int64, message: OutboxMessage?, attempts: [OutboxAttempt]) {
        self.init(id: id, message: message.map(OutboxMessageBody.init), attempts: attempts.map(OutboxAttemptBody.init))
    }
}

extension PhoneClaimBody {
    /// What a party sees of `claim`.
    public init(_ claim: PhoneClaimView) {
        self.init(
            claimId: claim.claimID, phoneNumber: claim.phoneNumber, status: claim.status.rawValue, ownerApproved: claim.ownerApproved,
            holderProved: claim.holderProved, createdAt: UTCTimestamp.iso8601(claim.createdAt),
            expiresAt: claim.expiresAt.map(UTCTimestamp.iso8601), verifiedAt: claim.verifiedAt.map(UTCTimestamp.iso8601),
            transferDueAt: claim.transferDueAt.map(UTCTimestamp.iso8601),
            releaseRequestedUntil: claim.releaseRequestedUntil.map(UTCTimestamp.iso8601), awaitingRelease: claim.awaitingRelease)
    }
}
