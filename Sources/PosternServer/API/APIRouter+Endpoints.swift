import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

extension APIRouter {
    /// A fresh `postern_browser` cookie: 24 random bytes, base64url.
    /// - Throws: `internalError` when the random generator fails.
    static func newBrowserCookie() throws(AuthError) -> String {
        do { return Base64URL.encode(try SecureRandom.bytes(24)) } catch { throw .internalError("random generator: \(error)") }
    }

    /// The JSON endpoints of API.md.
    static func apiRoutes(_ runtime: ServerContext, waits: ApprovalWaits) -> [Route] {
        let service = runtime.service
        let sent = HTTPResponse.body(202, AcceptedBody(status: .sent))
        return [
            Route(method: "POST", path: "/v1/accounts/anonymous", summary: "Create an anonymous account and sign it in", access: .public, status: 200,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(SessionBody.self), errors: [.signUpNotAllowed, .hookDenied, .hookFailed],
                                  links: .refreshing(from: "/refreshToken"))) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                return .body(200, SessionBody(try service.sessions.signInAnonymously()))
            },
            // Answered from the commit of its write (APIRouter.handleLater): the busiest request
            // parks no thread.
            Route.answeringLater(method: "POST", path: "/v1/email-link/send", summary: "Mail a sign-in link and 6-digit code (same answer for every address)", access: .public, status: 202,
                  contract: .init(request: .json(EmailLinkSendBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.invalidEmail, .invalidContinueURI, .invalidIDToken, .challengeRequired])) { c, reply throws(AuthError) in
                let body = try c.body(EmailLinkSendBody.self)
                let pass = try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP)
                let device = body.approval == true ? body.deviceName ?? DeviceName(userAgent: c.request.headers["user-agent"]).text : nil
                // bindBrowser: this browser's postern_browser cookie (a new one when it sent none) is the link's verifier.
                let sentCookie = ActionPages.browserCookie(c.request)
                var browser: String?
                if body.bindBrowser == true {
                    if let sentCookie { browser = sentCookie } else { browser = try Self.newBrowserCookie() }
                }
                let newCookie = sentCookie == nil ? browser.map {
                    ActionPages.setBrowserCookie($0, secure: runtime.settings.publicURL.hasPrefix("https:"))
                } : nil
                try service.emailLink.send(EmailLinkRequest(
                    email: body.email, continueURL: body.continueUrl, locale: body.locale, codeChallenge: body.codeChallenge,
                    idToken: body.idToken, approvalDevice: device, browserVerifier: browser, challengePass: pass)
                ) { result in
                    reply(result.map { number in
                        var response = number.map { .body(202, AcceptedBody(status: .sent, approvalNumber: $0)) } ?? sent
                        if let newCookie { response.headers.append(("Set-Cookie", newCookie)) }
                        return response
                    })
                }
            },
            Route(method: "GET", path: "/v1/challenge", summary: "A challenge to solve before a request that sends mail or SMS (after CHALLENGE_REQUIRED): the proof of work, or the CAPTCHA's site key", access: .public, status: 200,
                  contract: .init(answer: .json(ChallengeBody.self))) { _ throws(AuthError) in
                switch try service.challenges.offer() {
                case .proofOfWork(let work):
                    return .body(200, ChallengeBody(
                        kind: ProofOfWork.kind, algorithm: work.algorithm, challenge: work.challenge, maxnumber: work.maxnumber,
                        salt: work.salt, signature: work.signature))
                case .captcha(let service, let siteKey):
                    return .body(200, ChallengeBody(kind: service.rawValue, siteKey: siteKey))
                }
            },
            Route(method: "POST", path: "/v1/email-link/wait", summary: "Wait (up to 25 s) for the approval of a sign-in asked for with approval", access: .public, status: 200,
                  contract: .init(request: .json(EmailLinkWaitBody.self), answer: .json(LoginBody.self),
                                  errors: [.invalidOOBCode, .invalidEmail, .userDisabled, .invalidIDToken, .requiresRecentLogin, .migrationRequired,
                                           .credentialAlreadyInUse, .hookDenied, .hookFailed],
                                  links: .signedIn,
                                  otherAnswers: [.init(status: 202, description: "Not approved yet: call again.", body: AcceptedBody.self)])) { c throws(AuthError) in
                let body = try c.body(EmailLinkWaitBody.self)
                let seconds = body.waitSeconds ?? ApprovalWaits.longest
                guard (0...ApprovalWaits.longest).contains(seconds) else {
                    throw .invalidArgument("waitSeconds must be 0 to \(ApprovalWaits.longest).")
                }
                let login = try waits.wait(seconds: seconds) { () throws(AuthError) in
                    try service.emailLink.approvalResult(
                        email: body.email, codeVerifier: body.codeVerifier, idToken: body.idToken ?? c.bearer,
                        allowMigration: body.allowMigration)
                }
                return login.map { .body(200, LoginBody($0)) } ?? .body(202, AcceptedBody(status: .pending))
            },
            Route(method: "POST", path: "/v1/email-link/complete", summary: "Complete a sign-in by pasted link, oobCode, or address + 6-digit code", access: .public, status: 200,
                  contract: .init(request: .json(EmailLinkCompleteBody.self), answer: .json(LoginBody.self),
                                  errors: [.invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded, .linkOtherBrowser, .emailMismatch,
                                           .invalidCodeVerifier, .invalidEmail, .userDisabled,
                                           .invalidIDToken, .requiresRecentLogin, .migrationRequired, .credentialAlreadyInUse, .linkOtherSession,
                                           .signUpNotAllowed, .hookDenied, .hookFailed],
                                  links: .signedIn)) { c throws(AuthError) in
                let body = try c.body(EmailLinkCompleteBody.self)
                let login = try service.emailLink.complete(EmailLinkCompletion(
                    link: body.link, oobCode: body.oobCode, code: body.code, email: body.email, codeVerifier: body.codeVerifier,
                    idToken: body.idToken ?? c.bearer, allowMigration: body.allowMigration,
                    browserVerifier: ActionPages.browserCookie(c.request)))
                return .body(200, LoginBody(login))
            },
            Route(method: "POST", path: "/v1/password/sign-up", summary: "Verify-first sign-up (same answer for every address)", access: .public, status: 202,
                  contract: .init(request: .json(SignUpBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.invalidEmail, .weakPassword, .invalidContinueURI, .invalidIDToken, .challengeRequired])) { c throws(AuthError) in
                let body = try c.body(SignUpBody.self)
                let pass = try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP)
                try service.passwords.signUp(
                    email: body.email, password: body.password, idToken: body.idToken, continueURL: body.continueUrl,
                    locale: body.locale, codeChallenge: body.codeChallenge, challengePass: pass)
                return .body(202, AcceptedBody(status: .verificationSent))
            },
            Route(method: "POST", path: "/v1/password/sign-in", summary: "Sign in with a password", access: .public, status: 200,
                  contract: .init(request: .json(PasswordSignInBody.self), answer: .json(LoginBody.self),
                                  errors: [.invalidEmail, .invalidLoginCredentials, .userDisabled, .invalidIDToken, .migrationRequired,
                                           .credentialAlreadyInUse, .hookDenied, .hookFailed],
                                  links: .signedIn)) { c throws(AuthError) in
                let body = try c.body(PasswordSignInBody.self)
                let login = try service.passwords.signIn(
                    email: body.email, password: body.password, idToken: body.idToken ?? c.bearer,
                    allowMigration: body.allowMigration)
                return .body(200, LoginBody(login))
            },
            // Answered from its commit too: the request an attacker floods to enumerate or annoy
            // parks no thread either.
            Route.answeringLater(method: "POST", path: "/v1/password/reset", summary: "Mail a password-reset link (same answer for every address)", access: .public, status: 202,
                  contract: .init(request: .json(PasswordResetBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.invalidEmail, .invalidContinueURI, .challengeRequired])) { c, reply throws(AuthError) in
                let body = try c.body(PasswordResetBody.self)
                let pass = try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP)
                try service.passwords.requestReset(
                    email: body.email, continueURL: body.continueUrl, locale: body.locale, challengePass: pass
                ) { result in
                    reply(result.map { sent })
                }
            },
            Route(method: "POST", path: "/v1/actions/inspect", summary: "Say what a link is, consuming nothing", access: .public, status: 200,
                  contract: .init(request: .json(ActionBody.self), answer: .json(ActionInfoBody.self),
                                  errors: [.invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded])) { c throws(AuthError) in
                let body = try c.body(ActionBody.self)
                let info = try service.addresses.inspect(link: body.link, oobCode: body.oobCode)
                return .body(200, ActionInfoBody(info))
            },
            Route(method: "POST", path: "/v1/actions/apply", summary: "Apply a reset, verification, change or recovery link", access: .public, status: 200,
                  contract: .init(request: .json(ActionBody.self), answer: .json(AppliedActionBody.self),
                                  errors: [.invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded, .weakPassword, .userDisabled, .emailExists])) { c throws(AuthError) in
                let body = try c.body(ActionBody.self)
                let applied = try service.addresses.apply(link: body.link, oobCode: body.oobCode, newPassword: body.newPassword)
                return .body(200, AppliedActionBody(mode: applied.mode.rawValue, email: applied.email))
            },
            Route(method: "POST", path: "/v1/token", summary: "Exchange a refresh token for a new session", access: .public, status: 200,
                  contract: .init(request: .json(RefreshTokenBody.self), answer: .json(SessionBody.self),
                                  errors: [.invalidRefreshToken, .tokenRevoked, .userDisabled, .hookFailed],
                                  links: .refreshing(from: "/refreshToken"))) { c throws(AuthError) in
                let session = try service.sessions.refresh(try c.body(RefreshTokenBody.self).refreshToken)
                return .body(200, SessionBody(session))
            },
            Route(method: "POST", path: "/v1/sign-out", summary: "Revoke a refresh token's family", access: .public, status: 204,
                  contract: .init(request: .json(RefreshTokenBody.self), answer: .noContent)) { c throws(AuthError) in
                try service.sessions.signOut(refreshToken: try c.body(RefreshTokenBody.self).refreshToken)
                return HTTPResponse(status: 204)
            },
            Route(method: "GET", path: "/v1/me", summary: "The signed-in user", access: .user, status: 200,
                  contract: .init(answer: .json(UserBody.self))) { c throws(AuthError) in
                .body(200, UserBody(try service.profiles.me(idToken: try c.idToken())))
            },
            Route(method: "PATCH", path: "/v1/me", summary: "Change displayName and attributes", access: .user, status: 200,
                  contract: .init(request: .json(ProfilePatchBody.self), answer: .json(UserBody.self))) { c throws(AuthError) in
                let body = try c.body(ProfilePatchBody.self)
                let attributes = body.attributes.map { String(decoding: APIJSON.encode($0), as: UTF8.self) }
                let user = try service.profiles.update(idToken: try c.idToken(), displayName: body.displayName.change, attributes: attributes)
                return .body(200, UserBody(user))
            },
            Route(method: "DELETE", path: "/v1/me", summary: "Delete the account (recent sign-in)", access: .user, status: 204,
                  contract: .init(answer: .noContent, errors: [.requiresRecentLogin])) { c throws(AuthError) in
                try service.profiles.delete(idToken: try c.idToken())
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/me/password", summary: "Set or change the password (recent sign-in)", access: .user, status: 200,
                  contract: .init(request: .json(NewPasswordBody.self), answer: .json(SessionBody.self),
                                  errors: [.requiresRecentLogin, .weakPassword, .anonymousAccount, .hookFailed])) { c throws(AuthError) in
                let session = try service.passwords.setPassword(idToken: try c.idToken(), password: try c.body(NewPasswordBody.self).password)
                return .body(200, SessionBody(session))
            },
            Route(method: "POST", path: "/v1/me/email", summary: "Ask to change the address (recent sign-in)", access: .user, status: 202,
                  contract: .init(request: .json(ChangeEmailBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.requiresRecentLogin, .invalidEmail, .invalidContinueURI, .emailExists, .anonymousAccount, .tooManyAttempts])) { c throws(AuthError) in
                let body = try c.body(ChangeEmailBody.self)
                try service.addresses.requestChange(idToken: try c.idToken(), newEmail: body.newEmail, continueURL: body.continueUrl)
                return sent
            },
            Route(method: "POST", path: "/v1/me/verify-email", summary: "Mail a verification link", access: .user, status: 202,
                  contract: .init(request: .json(VerifyEmailBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.invalidContinueURI, .anonymousAccount, .tooManyAttempts])) { c throws(AuthError) in
                try service.addresses.requestVerification(idToken: try c.idToken(), continueURL: try c.body(VerifyEmailBody.self).continueUrl)
                return sent
            },
            Route(method: "POST", path: "/v1/admin/links", summary: "Make an action link (and optionally mail it)", access: .admin, status: 200,
                  contract: .init(request: .json(AdminLinkBody.self), answer: .json(IssuedLinkBody.self),
                                  errors: [.invalidEmail, .invalidContinueURI, .userNotFound],
                                  links: ["inspect": "/v1/actions/inspect", "complete": "/v1/email-link/complete", "apply": "/v1/actions/apply"]
                                      .sorted { $0.key < $1.key }.map {
                                          .init(name: $0.key, method: "POST", path: $0.value, description: "Use the link's code.",
                                                requestBody: ["oobCode": "$response.body#/oobCode"])
                                      })) { c throws(AuthError) in
                let body = try c.body(AdminLinkBody.self)
                let issued = try service.operators.issueLink(
                    action: body.action, email: body.email, continueURL: body.continueUrl, locale: body.locale, queue: body.send ?? false)
                return .body(200, IssuedLinkBody(
                    link: issued.link, oobCode: issued.oobCode, expiresAt: UTCTimestamp.iso8601(issued.expiresAt), queued: issued.queued))
            },
            Route(method: "POST", path: "/v1/admin/invitations", summary: "Invite an address: mail it a link that creates its account", access: .admin,
                  status: 202,
                  contract: .init(request: .json(InvitationBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.invalidEmail, .invalidContinueURI, .emailExists])) { c throws(AuthError) in
                let body = try c.body(InvitationBody.self)
                _ = try service.operators.invite(email: body.email, continueURL: body.continueUrl, locale: body.locale)
                return sent
            },
            Route(method: "GET", path: "/v1/admin/users",
                  summary: "Look a user up by address (`email`), else list users newest first by pages (`query`, `cursor`, `limit`)",
                  access: .admin, status: 200,
                  contract: .init(
                    answer: .content(mediaType: "application/json", schema: Self.userListSchema), errors: [.invalidArgument, .invalidEmail, .userNotFound],
                    query: [
                        .init(name: "email", schema: .emailAddress, required: false,
                              description: "The address to look up: the answer is that one User (404 when none holds it)."),
                        .init(name: "query", schema: .string("A uid, or the start of an address.", minLength: 1, maxLength: 320), required: false,
                              description: "Only the user with this uid and those whose address starts with it (case-insensitive)."),
                        .init(name: "limit", schema: .integer(minimum: 1, maximum: Int64(OperatorTools.userPageLimit)), required: false,
                              description: "The most to list (default 100, at most \(OperatorTools.userPageLimit))."),
                        .init(name: "cursor", schema: .string("A `nextCursor` this route answered (opaque: no other is taken).", pattern: "^[A-Za-z0-9_-]+$", minLength: 1), required: false,
                              description: "Continue after the page that answered it."),
                    ],
                    links: [RouteContract.Link].administeringUser.filter { $0.name != "lookUp" })) { c throws(AuthError) in
                // limit and cursor are checked even beside email, which answers one user alone.
                let (count, cursor) = try c.page(maximum: OperatorTools.userPageLimit) { UserCursor(text: $0) }
                if let email = c.request.query["email"] {
                    guard let user = try service.operators.user(email: email) else { throw .userNotFound }
                    return .body(200, UserBody(user))
                }
                let query = try c.request.query["query"].map { (text: String) throws(AuthError) -> UserQuery in
                    guard !text.isEmpty, text.unicodeScalars.count <= 320 else { throw .invalidArgument("query must be 1 to 320 characters.") }
                    return UserQuery(text)
                }
                let page = try service.operators.users(matching: query, after: cursor, limit: count)
                return .body(200, UserListBody(users: page.users.map(UserBody.init), nextCursor: page.next?.text))
            },
            Route(method: "PATCH", path: "/v1/admin/users/{uid}", summary: "Disable, verify or rename a user", access: .admin, status: 200,
                  contract: .init(request: .json(AdminUserPatchBody.self), answer: .json(UserBody.self), errors: [.userNotFound],
                                  pathParameters: ["uid": .uid])) { c throws(AuthError) in
                let body = try c.body(AdminUserPatchBody.self)
                let user = try service.operators.updateUser(
                    uid: c.parameters["uid"] ?? "", disabled: body.disabled, emailVerified: body.emailVerified,
                    displayName: body.displayName.change)
                return .body(200, UserBody(user))
            },
            Route(method: "DELETE", path: "/v1/admin/users/{uid}", summary: "Delete a user", access: .admin, status: 204,
                  contract: .init(answer: .noContent, errors: [.userNotFound], pathParameters: ["uid": .uid])) { c throws(AuthError) in
                try service.operators.deleteUser(uid: c.parameters["uid"] ?? "")
                return HTTPResponse(status: 204)
            },
            Route(method: "GET", path: "/v1/admin/outbox", summary: "Outbox message metadata (never bodies)", access: .admin, status: 200,
                  contract: .init(answer: .json(OutboxListBody.self), errors: [.invalidArgument],
                                  query: [.init(name: "status", schema: .oneOf(OutboxState.allCases.map(\.rawValue)), required: false,
                                                description: "Only messages in this state.")])) { c throws(AuthError) in
                var state: OutboxState?
                if let name = c.request.query["status"] {
                    guard let parsed = OutboxState(rawValue: name) else {
                        throw .invalidArgument("status must be one of \(OutboxState.allCases.map(\.rawValue).joined(separator: ", ")).")
                    }
                    state = parsed
                }
                let messages = try service.operators.outboxMessages(state: state, limit: 500)
                return .body(200, OutboxListBody(messages: messages.map(OutboxMessageBody.init)))
            },
            Route(method: "GET", path: "/v1/admin/outbox/{id}", summary: "A message and its delivery log (every attempt)", access: .admin,
                  status: 200,
                  contract: .init(answer: .json(OutboxMessageDetailBody.self), errors: [.invalidArgument, .notFound],
                                  pathParameters: ["id": .integer("The message's id.")])) { c throws(AuthError) in
                guard let id = Int64(c.parameters["id"] ?? "") else { throw .invalidArgument("id must be a message number.") }
                guard let found = try service.operators.outboxMessage(id: id) else { throw AuthError.outboxMessageNotFound }
                return .body(200, OutboxMessageDetailBody(id: id, message: found.message, attempts: found.attempts))
            },
            Route(method: "POST", path: "/v1/admin/outbox/{id}/retry", summary: "Queue a dead message again", access: .admin, status: 200,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(RetriedMessageBody.self), errors: [.notDead],
                                  pathParameters: ["id": .integer("The message's id.")])) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                guard let id = Int64(c.parameters["id"] ?? "") else { throw .invalidArgument("id must be a message number.") }
                guard try service.operators.retryOutboxMessage(id: id) else {
                    throw AuthError.notDead
                }
                return .body(200, RetriedMessageBody(id: id))
            },
            Route(method: "POST", path: "/v1/admin/bounces", summary: "Take in a delivery report or abuse report", access: .admin, status: 200,
                  contract: .init(
                    request: .raw(
                        mediaTypes: ["message/rfc822", "text/plain", "application/octet-stream"],
                        description: "The report as mail brought it: a delivery status notification (RFC 3464) or an abuse report (RFC 5965) sent to a message's --bounce-address reverse path. Anything else is answered `ignored` with its reason."),
                    answer: .json(BounceResultBody.self))) { c throws(AuthError) in
                .body(200, BounceResultBody(try service.bounces.take(c.request.body)))
            },
            Route(method: "GET", path: "/v1/admin/webhooks", summary: "The webhook endpoints (never their secrets)", access: .admin, status: 200,
                  contract: .init(answer: .json(WebhookEndpointListBody.self))) { _ throws(AuthError) in
                .body(200, WebhookEndpointListBody(endpoints: try service.operators.webhookEndpoints.list().map(WebhookEndpointBody.init)))
            },
            Route(method: "POST", path: "/v1/admin/webhooks", summary: "Add a webhook endpoint (its secret is answered once)", access: .admin,
                  status: 201,
                  contract: .init(request: .json(WebhookEndpointRequestBody.self), answer: .json(WebhookEndpointSecretBody.self),
                                  errors: [.invalidArgument])) { c throws(AuthError) in
                let body = try c.body(WebhookEndpointRequestBody.self)
                let events = body.events.flatMap { $0.isEmpty ? nil : $0.joined(separator: ",") }
                let added = try service.operators.webhookEndpoints.add(url: body.url, events: events)
                return .body(201, WebhookEndpointSecretBody(added))
            },
            Route(method: "DELETE", path: "/v1/admin/webhooks/{id}", summary: "Remove a webhook endpoint", access: .admin, status: 204,
                  contract: .init(answer: .noContent, errors: [.notFound],
                                  pathParameters: ["id": .string("The endpoint's id (`ep_…`).")])) { c throws(AuthError) in
                guard try service.operators.webhookEndpoints.remove(id: c.parameters["id"] ?? "") else { throw AuthError.webhookNotFound }
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/admin/webhooks/{id}/rotate-secret",
                  summary: "Give a webhook endpoint a new secret (the old one signs beside it for a day)", access: .admin, status: 200,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(WebhookEndpointSecretBody.self),
                                  errors: [.notFound],
                                  pathParameters: ["id": .string("The endpoint's id (`ep_…`).")])) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                guard let rotated = try service.operators.webhookEndpoints.rotate(id: c.parameters["id"] ?? "") else { throw AuthError.webhookNotFound }
                return .body(200, WebhookEndpointSecretBody(rotated))
            },
            Route(method: "POST", path: "/v1/admin/webhooks/{id}/test", summary: "Queue a webhook.test event for one endpoint", access: .admin,
                  status: 202,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(WebhookTestBody.self), errors: [.notFound],
                                  pathParameters: ["id": .string("The endpoint's id (`ep_…` or `settings-N`).")])) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                guard let id = try service.operators.webhookEndpoints.test(id: c.parameters["id"] ?? "") else { throw AuthError.webhookNotFound }
                return .body(202, WebhookTestBody(webhookId: id))
            },
        ]
    }
}

extension APIRouter {
    /// The answer of `GET /v1/admin/users`: the one User of `email` (as the route answered before
    /// it listed), else a page of the list (`UserListBody`), whose `nextCursor` is null on the last.
    static let userListSchema: JSONSchema = {
        var schema = JSONSchema.object("One User (`email`), or a page of users newest first (by creation time, then uid).", [])
        schema.anyOf = [
            .body(UserBody.self),
            .object("A page of users.", [
                .required("users", .array(.body(UserBody.self))),
                .required("nextCursor", .string("Pass as `cursor` for the next page; null on the last.").orNull),
            ]),
        ]
        return schema
    }()
}
