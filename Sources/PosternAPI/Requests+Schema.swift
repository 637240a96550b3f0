/// The request bodies' schemas and examples: what the decoders of `Requests.swift` accept. Unknown
/// keys are ignored (so the objects stay open), an absent optional field and `null` mean the same,
/// and a body with no required field may be left out entirely.

extension JSONSchema {
    /// Examples that fit the schemas (the document's examples).
    enum Example {
        static let email = "ann@example.com"
        static let continueURL = "https://app.example.com/welcome"
        static let idToken = "eyJhbGciOiJFUzI1NiIsImtpZCI6IjEiLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl"
        static let refreshToken = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE"
        static let codeChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        /// An ALTCHA payload: base64 of {"algorithm","challenge","number","salt","signature"}.
        static let challengeSolution = "eyJhbGdvcml0aG0iOiJTSEEtMjU2IiwiY2hhbGxlbmdlIjoiLi4uIiwibnVtYmVyIjo0Miwic2FsdCI6Ii4uLiIsInNpZ25hdHVyZSI6Ii4uLiJ9"
        static let codeVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        static let oobCode = "AQAAAAEBZ2V0LWEtcmVhbC1jb2RlLWZyb20tdGhlLW1haWw"
        static let link = "https://auth.example.com/action?mode=signIn&oobCode=AQAAAAEBZ2V0LWEtcmVhbC1jb2RlLWZyb20tdGhlLW1haWw"
        static let uid = "q8Rz3yH2nV0kLw5tX1cB7A"
        static let timestamp = "2025-01-31T12:00:00Z"
    }
}

extension EmailLinkSendBody: DocumentedBody {
    public static let schemaName = "EmailLinkSendRequest"
    public static var schema: JSONSchema {
        var schema = JSONSchema.object("Mail a sign-in link and 6-digit code. `idToken` asks to bind the sign-in to that session.", [
            .required("email", .emailAddress),
            .optional("continueUrl", .continueURL),
            .optional("locale", .locale),
            .optional("codeChallenge", .codeChallenge),
            .optional("idToken", .idToken),
            .optional("approval", .boolean(
                "Approve on your other device: the answer gives a number to show; the link's page asks its reader to pick it. Needs codeChallenge.")),
            .optional("deviceName", .string(
                "With approval: how the page names the asking device (default: read from the User-Agent).", minLength: 1,
                maxLength: WireLimits.deviceNameMaximumLength)),
            .optional("bindBrowser", .boolean(
                "Bind the link to this browser: the answer sets the postern_browser cookie (HttpOnly, SameSite=Lax) unless sent one; the link completes only where that cookie is sent, or by the 6-digit code. Not with codeChallenge or approval (400 INVALID_ARGUMENT).")),
            .optional("challengeSolution", .challengeSolution),
        ])
        // An approval needs PKCE: its verifier is the waiting device's secret.
        schema.anyOf = [
            .object([.optional("approval", .boolean(only: false))]),
            .object([.required("codeChallenge", .codeChallenge)]),
        ]
        return schema
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, continueUrl: JSONSchema.Example.continueURL, locale: "en",
             codeChallenge: JSONSchema.Example.codeChallenge, idToken: JSONSchema.Example.idToken, approval: true,
             deviceName: "Ada's laptop", bindBrowser: false, challengeSolution: JSONSchema.Example.challengeSolution)
    }
}

extension EmailLinkWaitBody: DocumentedBody {
    public static let schemaName = "EmailLinkWaitRequest"
    public static var schema: JSONSchema {
        .object("Wait for the approval of a send-link made with `approval`, holding its PKCE verifier (the waiting device's secret).", [
            .required("email", .emailAddress),
            .required("codeVerifier", .string("The PKCE verifier of the request.", minLength: 1)),
            .optional("idToken", .idToken),
            .optional("allowMigration", .boolean("As for complete: replace this device's anonymous session.")),
            .optional("waitSeconds", .integer("How long this call may wait (default 25).", minimum: 0, maximum: 25)),
        ])
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, codeVerifier: "dBjftJeZ4CVP-mJ92K9CXSWHT5ph5T5ZNBgiDF9BHpsnKEgP", idToken: JSONSchema.Example.idToken,
             allowMigration: true, waitSeconds: 25)
    }
}

extension EmailLinkCompleteBody: DocumentedBody {
    public static let schemaName = "EmailLinkCompleteRequest"
    public static var schema: JSONSchema {
        var schema = JSONSchema.object(
            "Give `link` (any pasted text), `oobCode`, or `code` (the 6 digits) with `email`; the first given wins. The idToken may also come as `Authorization: Bearer`.",
            [
                .optional("link", .pastedLink),
                .optional("oobCode", .oobCode),
                .optional("code", .string("The 6 digits from the mail; needs `email`. Empty means absent.")),
                .optional("email", .emailAddress),
                .optional("codeVerifier", .string("The PKCE verifier whose challenge the link was sent with.")),
                .optional("idToken", .idToken),
                .optional("allowMigration", .boolean("When an anonymous session would be replaced by an existing account: true signs in and the app moves the guest's data, false signs in without moving it; absent: 409 MIGRATION_REQUIRED.")),
            ])
        schema.anyOf = [
            .naming("link"),
            .naming("oobCode"),
            .object([.required("code", .string(pattern: "^[0-9]{6}$")), .required("email", .emailAddress)]),
        ]
        return schema
    }
    public static var example: Self {
        Self(link: JSONSchema.Example.link, oobCode: JSONSchema.Example.oobCode, code: "123456", email: JSONSchema.Example.email,
             codeVerifier: JSONSchema.Example.codeVerifier, idToken: JSONSchema.Example.idToken, allowMigration: true)
    }
}

extension SignUpBody: DocumentedBody {
    public static let schemaName = "SignUpRequest"
    public static var schema: JSONSchema {
        .object("Verify-first sign-up: the account (or the upgrade of the anonymous `idToken`) is made when the mailed link is completed.", [
            .required("email", .emailAddress),
            .required("password", .newPassword),
            .optional("idToken", .idToken),
            .optional("continueUrl", .continueURL),
            .optional("locale", .locale),
            .optional("codeChallenge", .codeChallenge.described("PKCE S256 of this device: the password applies only with its verifier.")),
            .optional("challengeSolution", .challengeSolution),
        ])
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, password: "correct horse battery", idToken: JSONSchema.Example.idToken,
             continueUrl: JSONSchema.Example.continueURL, locale: "en", codeChallenge: JSONSchema.Example.codeChallenge,
             challengeSolution: JSONSchema.Example.challengeSolution)
    }
}

extension PasswordSignInBody: DocumentedBody {
    public static let schemaName = "PasswordSignInRequest"
    public static var schema: JSONSchema {
        .object("Sign in with a password. The idToken may also come as `Authorization: Bearer`.", [
            .required("email", .emailAddress),
            .required("password", .string("The account's password (any string: a wrong one is INVALID_LOGIN_CREDENTIALS).")),
            .optional("idToken", .idToken),
            .optional("allowMigration", .boolean("As for /v1/email-link/complete.")),
        ])
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, password: "correct horse battery", idToken: JSONSchema.Example.idToken, allowMigration: false)
    }
}

extension PasswordResetBody: DocumentedBody {
    public static let schemaName = "PasswordResetRequest"
    public static var schema: JSONSchema {
        .object("Mail a password-reset link.", [
            .required("email", .emailAddress),
            .optional("continueUrl", .continueURL),
            .optional("locale", .locale),
            .optional("challengeSolution", .challengeSolution),
        ])
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, continueUrl: JSONSchema.Example.continueURL, locale: "en",
             challengeSolution: JSONSchema.Example.challengeSolution)
    }
}

extension ActionBody: DocumentedBody {
    public static let schemaName = "ActionRequest"
    public static var schema: JSONSchema {
        var schema = JSONSchema.object("Name an action link by `link` (any pasted text) or `oobCode`; the first given wins.", [
            .optional("link", .pastedLink),
            .optional("oobCode", .oobCode),
            .optional("newPassword", .newPassword.described("Applying a reset link: the new password (needed then; ignored otherwise).")),
        ])
        schema.anyOf = [.naming("link"), .naming("oobCode")]
        return schema
    }
    public static var example: Self {
        Self(link: JSONSchema.Example.link, oobCode: JSONSchema.Example.oobCode, newPassword: "correct horse battery")
    }
}

extension RefreshTokenBody: DocumentedBody {
    public static let schemaName = "RefreshTokenRequest"
    public static var schema: JSONSchema { .object([.required("refreshToken", .refreshToken)]) }
    public static var example: Self { Self(refreshToken: JSONSchema.Example.refreshToken) }
}

extension ProfilePatchBody: DocumentedBody {
    public static let schemaName = "ProfilePatchRequest"
    public static var schema: JSONSchema {
        .object("Absent fields are left alone; `displayName: null` clears the name; `attributes` replaces the object.", [
            .optional("displayName", .displayName),
            .optional("attributes", .attributes),
        ])
    }
    public static var example: Self { Self(displayName: .value("Ann"), attributes: ["bio": .string("Writes about birds.")]) }
}

extension NewPasswordBody: DocumentedBody {
    public static let schemaName = "NewPasswordRequest"
    public static var schema: JSONSchema { .object([.required("password", .newPassword)]) }
    public static var example: Self { Self(password: "correct horse battery") }
}

extension ChangeEmailBody: DocumentedBody {
    public static let schemaName = "ChangeEmailRequest"
    public static var schema: JSONSchema {
        .object("The new address gets a verifyAndChangeEmail link; the change happens when it is applied.", [
            .required("newEmail", .emailAddress),
            .optional("continueUrl", .continueURL),
        ])
    }
    public static var example: Self { Self(newEmail: "ann.new@example.com", continueUrl: JSONSchema.Example.continueURL) }
}

extension VerifyEmailBody: DocumentedBody {
    public static let schemaName = "VerifyEmailRequest"
    public static var schema: JSONSchema { .object([.optional("continueUrl", .continueURL)]) }
    public static var example: Self { Self(continueUrl: JSONSchema.Example.continueURL) }
}

extension AdminLinkBody: DocumentedBody {
    public static let schemaName = "AdminLinkRequest"
    public static var schema: JSONSchema {
        .object("Make an action link for an address (operators only: tells whether the account exists, no limits).", [
            .required("action", JSONSchema.string("`sign-in`, `reset-password` or `verify-email`.").refined(.linkAction)),
            .required("email", .emailAddress),
            .optional("continueUrl", .continueURL),
            .optional("locale", .locale),
            .optional("send", .boolean("Also queue the mail that carries the link.")),
        ])
    }
    public static var example: Self {
        Self(action: "sign-in", email: JSONSchema.Example.email, continueUrl: JSONSchema.Example.continueURL, locale: "en", send: true)
    }
}

extension InvitationBody: DocumentedBody {
    public static let schemaName = "InvitationRequest"
    public static var schema: JSONSchema {
        .object("Invite an address: its mail carries a link that creates the account whatever --sign-up says (operators only).", [
            .required("email", .emailAddress),
            .optional("continueUrl", .continueURL),
            .optional("locale", .locale),
        ])
    }
    public static var example: Self { Self(email: JSONSchema.Example.email, continueUrl: JSONSchema.Example.continueURL, locale: "en") }
}

extension AdminUserPatchBody: DocumentedBody {
    public static let schemaName = "AdminUserPatchRequest"
    public static var schema: JSONSchema {
        .object("Absent fields are left alone; `displayName: null` clears the name.", [
            .optional("disabled", .boolean("A disabled account cannot sign in; its sessions stop working.")),
            .optional("emailVerified", .boolean()),
            .optional("displayName", .displayName),
        ])
    }
    public static var example: Self { Self(disabled: true, emailVerified: true, displayName: .value("Ann")) }
}

extension EmptyBody: DocumentedBody {
    public static let schemaName = "EmptyRequest"
    public static var schema: JSONSchema { .object("Nothing; any object (or no body) is accepted.", []) }
    public static var example: Self { Self() }
}

extension WebhookEndpointRequestBody: DocumentedBody {
    public static let schemaName = "WebhookEndpointRequest"
    public static var schema: JSONSchema {
        .object("A new webhook endpoint; its secret is made by Postern and answered once.", [
            .required("url", .string(
                "An http or https URL, no user or password in it; its host a name without [ ] : or an IPv6 address in brackets, its port 0 to 65535. A host that is a loopback, link-local, private, unspecified, reserved or multicast address, in any spelling (127.0.0.1, 0x7f000001, [::1]), is refused 400 INVALID_ARGUMENT unless the daemon's --allow-private-targets lists it.", pattern: WebhookEndpointRequestBody.urlPattern,
                maxLength: WebhookEndpointRequestBody.urlMaximumLength)),
            .optional("events", .array(.oneOf(
                ["*", "user.*", "session.*", "mail.*"] + WebhookEndpointRequestBody.eventTypes,
                "An event type, `user.*` for every user event, or `*`. Absent or empty: every event."))),
        ])
    }
    public static var example: Self { Self(url: "https://app.example/hooks/postern", events: ["user.*", "mail.failed"]) }
}
