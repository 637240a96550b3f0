import Foundation
import PosternAPI
import PosternCore

extension APIRouter {
    /// Sign in with Apple, Google and other OpenID providers (docs/providers.md): the app's ID
    /// token from the provider at `/v1/provider/sign-in`, and the signed-in user's identities
    /// under `/v1/me/providers`.
    static func providerRoutes(_ runtime: ServerContext) -> [Route] {
        let service = runtime.service
        let providerPath: [String: JSONSchema] = ["provider": .providerName]
        @Sendable func provider(_ c: RouteContext) -> String {
            let raw = c.parameters["provider"] ?? ""
            return raw.removingPercentEncoding ?? raw
        }
        let tokenRefusals: [APIErrorCode] = [.providerNotConfigured, .invalidProviderToken]
        return [
            Route(method: "POST", path: "/v1/provider/sign-in", summary: "Sign in with an identity provider's ID token (Sign in with Apple, Google, or a provider of --identity-providers): the email link's six cases, for the account the provider's subject is linked to", access: .public, status: 200,
                  contract: .init(request: .json(ProviderSignInBody.self), answer: .json(LoginBody.self),
                                  errors: tokenRefusals + [.invalidIDToken, .requiresRecentLogin, .userDisabled, .migrationRequired,
                                           .credentialAlreadyInUse, .accountExistsWithDifferentCredential, .providerAlreadyLinked, .signUpNotAllowed,
                                           .hookDenied, .hookFailed],
                                  links: .signedIn)) { c throws(AuthError) in
                let body = try c.body(ProviderSignInBody.self)
                let login = try service.providerSignIn.signIn(
                    provider: body.provider, token: body.providerIdToken, nonce: body.nonce, idToken: body.idToken ?? c.bearer,
                    allowMigration: body.allowMigration, displayName: body.displayName)
                return .body(200, LoginBody(login))
            },
            Route(method: "POST", path: "/v1/me/providers", summary: "Link an identity provider's ID token to the signed-in account (recent sign-in)", access: .user, status: 200,
                  contract: .init(request: .json(LinkProviderBody.self), answer: .json(UserBody.self),
                                  errors: tokenRefusals + [.requiresRecentLogin, .credentialAlreadyInUse, .providerAlreadyLinked,
                                           .accountExistsWithDifferentCredential])) { c throws(AuthError) in
                let body = try c.body(LinkProviderBody.self)
                let user = try service.providerSignIn.link(
                    idToken: try c.idToken(), provider: body.provider, token: body.providerIdToken, nonce: body.nonce)
                return .body(200, UserBody(user))
            },
            Route(method: "DELETE", path: "/v1/me/providers/{provider}", summary: "Unlink the account's identity of a provider (recent sign-in; never the last way in; the sessions stay)", access: .user, status: 200,
                  contract: .init(answer: .json(UserBody.self), errors: [.requiresRecentLogin, .providerNotLinked, .lastSignInMethod],
                                  pathParameters: providerPath)) { c throws(AuthError) in
                .body(200, UserBody(try service.providerSignIn.unlink(idToken: try c.idToken(), provider: provider(c))))
            },
            Route(method: "POST", path: "/v1/provider/apple/notifications", summary: "Apple's server-to-server notifications (register this URL with Apple): consent revoked or the Apple ID deleted unlink it and end its sessions", access: .public, status: 200,
                  contract: .init(request: .json(AppleNotificationBody.self), answer: .json(NotificationAcceptedBody.self),
                                  errors: [.providerNotConfigured, .invalidProviderToken])) { c throws(AuthError) in
                let notification = try service.providerSignIn.appleNotification(try c.body(AppleNotificationBody.self).payload)
                runtime.logger.info("apple notification", ["event": "\(notification.kind)"])
                return .body(200, NotificationAcceptedBody())
            },
        ]
    }
}
