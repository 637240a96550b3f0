/// The answer bodies' schemas and examples: what the encoders of `Responses.swift` write. A field
/// the decoder can do without is optional here; an optional one the server sends as `null` when
/// it has no value is nullable.

extension SessionBody: DocumentedBody {
    public static let schemaName = "Session"
    public static var schema: JSONSchema {
        .object("A signed-in session.", [
            .required("uid", .uid),
            .required("idToken", .idToken.described("ES256 JWT; claims include sub, iat, exp, auth_time, email, email_verified, is_anonymous, sign_in_method.")),
            .required("refreshToken", .refreshToken),
            .required("expiresIn", .integer("Seconds until the ID token expires.", minimum: 0)),
            .required("isAnonymous", .boolean()),
            .optional("email", .emailAddress),
        ])
    }
    public static var example: Self {
        Self(uid: JSONSchema.Example.uid, idToken: JSONSchema.Example.idToken, refreshToken: JSONSchema.Example.refreshToken,
             expiresIn: 3600, isAnonymous: false, email: JSONSchema.Example.email)
    }
}

extension LoginBody.Migration: DocumentedBody {
    public static let schemaName = "Migration"
    public static var schema: JSONSchema {
        .object("An anonymous account was replaced by an existing one: move the app's data from `fromUid` to `toUid`.", [
            .required("fromUid", .uid),
            .required("toUid", .uid),
            .required("allowMigration", .boolean()),
        ])
    }
    public static var example: Self { Self(fromUid: "anonymous-uid-0123456789", toUid: JSONSchema.Example.uid, allowMigration: true) }
}

extension LoginBody: DocumentedBody {
    public static let schemaName = "LoginDescriptor"
    public static var schema: JSONSchema {
        .object("The outcome of a sign-in.", [
            .required("uid", .uid),
            .optional("email", .emailAddress),
            .required("isNewUser", .boolean("True exactly when the address had no account before: show the onboarding.")),
            .required("session", .body(SessionBody.self)),
            .optional("migration", .body(Migration.self)),
            .optional("needsPassword", .boolean("A password sign-up confirmed away from its device, or a password from before the address was proved dropped: ask for a password (absent: false).")),
        ])
    }
    public static var example: Self {
        Self(uid: JSONSchema.Example.uid, email: JSONSchema.Example.email, isNewUser: false, session: .example, migration: .example,
             needsPassword: false)
    }
    public static var referencedBodies: [any DocumentedBody.Type] { [SessionBody.self, Migration.self] }
}

extension UserBody: DocumentedBody {
    public static let schemaName = "User"
    public static var schema: JSONSchema {
        .object("A user record.", [
            .required("uid", .uid),
            .optional("email", .emailAddress),
            .required("emailVerified", .boolean()),
            .optional("displayName", .displayName),
            .required("isAnonymous", .boolean()),
            .required("providers", .array(.string(), "Sign-in methods the account has: `password`, `emailLink`, `phone` (with --phone-sign-in), and `apple`, `google`, `oidc:<id>` for identity providers (--identity-providers).")),
            .required("attributes", .attributes),
            .required("createdAt", .timestamp),
            .optional("lastSignInAt", .timestamp),
            .required("disabled", .boolean()),
        ])
    }
    public static var example: Self {
        Self(uid: JSONSchema.Example.uid, email: JSONSchema.Example.email, emailVerified: true, displayName: "Ann", isAnonymous: false,
             providers: ["emailLink", "password"], attributes: ["bio": .string("Writes about birds.")],
             createdAt: JSONSchema.Example.timestamp, lastSignInAt: JSONSchema.Example.timestamp, disabled: false)
    }
}

extension OutboxMessageBody: DocumentedBody {
    public static let schemaName = "OutboxMessage"
    public static var schema: JSONSchema {
        .object("An outbox message's metadata (never its body).", [
            .required("id", .integer()),
            .required("kind", .string("What the mail is (`signIn`, `resetPassword`, …).")),
            .required("recipient", .string("The address it goes to.")),
            .required("state", .string("`queued`, `claimed`, `sent` or `dead`.")),
            .required("attempts", .integer(minimum: 0)),
            .required("nextAttemptAt", .timestamp),
            .required("createdAt", .timestamp),
            .required("giveUpAt", .timestamp),
            .optional("finishedAt", .timestamp),
            .optional("lastReply", .string("The relay's last reply; null before the first attempt.")),
            .optional("bounce", .body(BounceBody.self)),
        ])
    }
    public static var referencedBodies: [any DocumentedBody.Type] { [BounceBody.self] }
    public static var example: Self {
        Self(id: 1, kind: "signIn", recipient: JSONSchema.Example.email, state: "sent", attempts: 1,
             nextAttemptAt: JSONSchema.Example.timestamp, createdAt: JSONSchema.Example.timestamp, giveUpAt: "2025-02-01T12:00:00Z",
             finishedAt: JSONSchema.Example.timestamp, lastReply: "250 2.0.0 Ok: queued")
            .withBounce(.example)
    }
}

extension BounceBody: DocumentedBody {
    public static let schemaName = "Bounce"
    public static var schema: JSONSchema {
        .object("What a delivery report (RFC 3464) or abuse report (RFC 5965) said about a sent message.", [
            .required("kind", .oneOf(["failed", "delayed", "complaint"])),
            .required("status", .string("The enhanced status code (`5.1.1`), or the abuse report's feedback type.")),
            .required("detail", .string("The remote server's words, the recipient's address taken out.")),
            .required("at", .timestamp),
        ])
    }
    public static var example: Self {
        Self(kind: "failed", status: "5.1.1", detail: "X-Postfix; unknown user: \"<recipient>\"", at: JSONSchema.Example.timestamp)
    }
}

extension BounceResultBody: DocumentedBody {
    public static let schemaName = "BounceResult"
    public static var schema: JSONSchema {
        .object("What the report was matched to and what was done.", [
            .required("outcome", .oneOf(["bounced", "delayed", "complaint", "ignored"])),
            .optional("messageId", .integer()),
            .optional("status", .string("The status (`5.1.1`) or feedback type.")),
            .optional("reason", .string("Why nothing was done.")),
        ])
    }
    public static var example: Self {
        Self(outcome: "ignored", messageId: 1, status: "2.0.0", reason: "the report says the message was delivered, relayed or expanded")
    }
}

extension OutboxListBody: DocumentedBody {
    public static let schemaName = "OutboxMessageList"
    public static var schema: JSONSchema {
        .object("The newest messages first, at most 500.", [.required("messages", .array(.body(OutboxMessageBody.self)))])
    }
    public static var example: Self { Self(messages: [.example]) }
    public static var referencedBodies: [any DocumentedBody.Type] { [OutboxMessageBody.self] }
}

extension RetriedMessageBody: DocumentedBody {
    public static let schemaName = "RetriedMessage"
    public static var schema: JSONSchema {
        .object("The dead message is queued again.", [.required("id", .integer()), .required("status", .oneOf(["queued"]))])
    }
    public static var example: Self { Self(id: 1) }
}

extension ActionInfoBody: DocumentedBody {
    public static let schemaName = "ActionInfo"
    public static var schema: JSONSchema {
        .object("What an action link is, consuming nothing.", [
            .required("mode", .actionMode),
            .optional("email", .emailAddress.described("The address the link was sent to; null for a link sent with a PKCE challenge.")),
            .required("expiresAt", .timestamp),
            .optional("continueUrl", .string(format: "uri")),
        ])
    }
    public static var example: Self {
        Self(mode: "signIn", email: JSONSchema.Example.email, expiresAt: JSONSchema.Example.timestamp, continueUrl: JSONSchema.Example.continueURL)
    }
}

extension AppliedActionBody: DocumentedBody {
    public static let schemaName = "AppliedAction"
    public static var schema: JSONSchema {
        .object("The action was applied.", [.required("mode", .actionMode), .required("email", .emailAddress)])
    }
    public static var example: Self { Self(mode: "resetPassword", email: JSONSchema.Example.email) }
}

extension IssuedLinkBody: DocumentedBody {
    public static let schemaName = "IssuedLink"
    public static var schema: JSONSchema {
        .object("An action link made for an operator.", [
            .required("link", .string(format: "uri")),
            .required("oobCode", .oobCode.described("The code inside the link: a secret.")),
            .required("expiresAt", .timestamp),
            .required("queued", .boolean("Whether the mail was queued too.")),
        ])
    }
    public static var example: Self {
        Self(link: JSONSchema.Example.link, oobCode: JSONSchema.Example.oobCode, expiresAt: JSONSchema.Example.timestamp, queued: true)
    }
}

extension AcceptedBody: DocumentedBody {
    public static let schemaName = "Accepted"
    public static var schema: JSONSchema {
        .object("The request is recorded; the mail decides the rest. The same for every address.", [
            .required("status", .oneOf(AcceptedBody.Status.allCases.map(\.rawValue))),
            .optional("approvalNumber", .integer(
                "Send-link with `approval`: the number the asking device shows while it waits.", minimum: 10, maximum: 99)),
        ])
    }
    public static var example: Self { Self(status: .sent, approvalNumber: 42) }
}

extension ErrorBody.Detail: DocumentedBody {
    public static let schemaName = "ErrorDetail"
    public static var schema: JSONSchema {
        .object("What went wrong.", [
            .required("code", .oneOf(APIErrorCode.allCases.map(\.rawValue), "From the catalogue; a client should treat an unknown code as its status's generic error.")),
            .required("message", .string("A sentence for a developer (never a secret or an address).")),
            .optional("anonymousUid", .uid.described("With MIGRATION_REQUIRED: the anonymous account that would be replaced.")),
            .optional("rule", .oneOf(PasswordRule.allCases.map(\.rawValue), "With WEAK_PASSWORD: the rule the password breaks.")),
            .optional("signedInHere", .oneOf(["true"], "With LINK_USED: the browser or device presenting the link is the one that completed it (you are already signed in).")),
            .optional("challenge", .oneOf(["altcha", "turnstile", "hcaptcha", "recaptcha"], "With CHALLENGE_REQUIRED: what to solve.")),
            .optional("challengeUrl", .oneOf(["/v1/challenge"], "With CHALLENGE_REQUIRED: where a challenge is fetched.")),
            .optional("siteKey", .string("With CHALLENGE_REQUIRED for a CAPTCHA: the site's public key for its widget.")),
        ])
    }
    public static var example: Self {
        Self(code: APIErrorCode.migrationRequired.rawValue, message: "The address belongs to an existing account.",
             anonymousUid: "anonymous-uid-0123456789", rule: "tooShort")
    }
}

extension ErrorBody: DocumentedBody {
    public static let schemaName = "Error"
    public static var schema: JSONSchema { .object("Every error answer.", [.required("error", .body(Detail.self))]) }
    public static var example: Self { Self(error: .example) }
    public static var referencedBodies: [any DocumentedBody.Type] { [Detail.self] }
}

extension OutboxMessageBody {
    /// This message with `bounce` set (for examples).
    func withBounce(_ bounce: BounceBody) -> Self {
        var copy = self
        copy.bounce = bounce
        return copy
    }
}
extension WebhookEndpointBody: DocumentedBody {
    public static let schemaName = "WebhookEndpoint"
    public static var schema: JSONSchema {
        .object("A webhook endpoint (never its secret).", [
            .required("id", .string("`ep_…` for an added endpoint, `settings-N` for the N-th of --webhook-urls.")),
            .required("url", .string("Where the events are POSTed.")),
            .required("events", .array(.string("An event type, or `*` for every one."))),
            .required("source", .oneOf(["api", "settings"])),
            .required("disabled", .boolean("A 410 Gone disabled it; adding the URL again enables it.")),
            .optional("previousSecretUntil", .timestamp),
            .optional("createdAt", .timestamp),
        ])
    }
    public static var example: Self {
        Self(id: "ep_Q2xpY2tMaW5r", url: "https://app.example/hooks/postern", events: ["user.created", "mail.failed"], source: "api",
             disabled: false, previousSecretUntil: nil, createdAt: JSONSchema.Example.timestamp)
    }
}

extension WebhookEndpointListBody: DocumentedBody {
    public static let schemaName = "WebhookEndpointList"
    public static var schema: JSONSchema {
        .object("The endpoints of --webhook-urls first, then the added ones, oldest first.", [
            .required("endpoints", .array(.body(WebhookEndpointBody.self))),
        ])
    }
    public static var example: Self { Self(endpoints: [.example]) }
    public static var referencedBodies: [any DocumentedBody.Type] { [WebhookEndpointBody.self] }
}

extension WebhookEndpointSecretBody: DocumentedBody {
    public static let schemaName = "WebhookEndpointSecret"
    public static var schema: JSONSchema {
        .object("The endpoint and its new signing secret, shown this once (stored only sealed).", [
            .required("endpoint", .body(WebhookEndpointBody.self)),
            .required("secret", .string("`whsec_` and the key in base64, for a Standard Webhooks library.")),
        ])
    }
    public static var example: Self { Self(endpoint: .example, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") }
    public static var referencedBodies: [any DocumentedBody.Type] { [WebhookEndpointBody.self] }
}

extension WebhookTestBody: DocumentedBody {
    public static let schemaName = "WebhookTest"
    public static var schema: JSONSchema {
        .object("A `webhook.test` event is queued for the endpoint.", [.required("webhookId", .string("The `webhook-id` it carries."))])
    }
    public static var example: Self { Self(webhookId: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W") }
}

extension OutboxAttemptBody: DocumentedBody {
    public static let schemaName = "OutboxAttempt"
    public static var schema: JSONSchema {
        .object("One delivery attempt (the address never appears).", [
            .required("attemptedAt", .timestamp),
            .required("durationMs", .integer(minimum: 0)),
            .required("transport", .string("`smtp://host:port`, `smtps://…`, `smtp+plain://…` or `file`.")),
            .optional("replyCode", .integer("The server's reply code; absent when there was none (no connection).")),
            .required("reply", .string("The reply or the local failure; addresses, links and long tokens replaced.", maxLength: 300)),
            .required("outcome", .oneOf(["sent", "deferred", "failed"])),
        ])
    }
    public static var example: Self {
        Self(attemptedAt: JSONSchema.Example.timestamp, durationMs: 84, transport: "smtp://mail.example:587", replyCode: 451,
             reply: "451 4.3.0 try again later", outcome: "deferred")
    }
}

extension OutboxMessageDetailBody: DocumentedBody {
    public static let schemaName = "OutboxMessageDetail"
    public static var schema: JSONSchema {
        .object("A message and its delivery log.", [
            .required("id", .integer()),
            .optional("message", JSONSchema.body(OutboxMessageBody.self).orNull),
            .required("attempts", .array(.body(OutboxAttemptBody.self))),
        ])
    }
    public static var example: Self {
        Self(id: 1, message: .example, attempts: [
            .example,
            OutboxAttemptBody(attemptedAt: JSONSchema.Example.timestamp, durationMs: 97, transport: "smtp://mail.example:587",
                              replyCode: 250, reply: "250 2.0.0 Ok: queued", outcome: "sent"),
        ])
    }
    public static var referencedBodies: [any DocumentedBody.Type] { [OutboxMessageBody.self, OutboxAttemptBody.self] }
}
