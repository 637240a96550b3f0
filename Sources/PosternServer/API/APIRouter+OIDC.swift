import Foundation
import PosternAPI
import PosternCore

/// The OpenID Connect provider's machine endpoints: discovery, token, userinfo, revocation, and
/// the user's own consents. Their errors are OAuth's JSON (`{"error", "error_description"}`, RFC
/// 6749 §5.2), which relying parties read, not the API's. The hosted page's routes are
/// `OIDCPages`'.
extension APIRouter {
    static func oidcRoutes(_ runtime: ServerContext) -> [Route] {
        let flow = runtime.service.oidc
        typealias Path = OIDCDiscovery.Path
        let oauthErrors: [Int: String] = [
            400: "OAuth's error (RFC 6749 §5.2): {error, error_description}, error one of invalid_request, invalid_grant, unsupported_grant_type, invalid_scope.",
            401: "invalid_client (with WWW-Authenticate: Basic when the header was tried).",
            503: "temporarily_unavailable: the store does not answer.",
        ]
        let tokenForm = JSONSchema.object([
            .optional("grant_type", .oneOf(["authorization_code", "refresh_token"], "The grant.")),
            .optional("code", .string("The authorization code.")), .optional("redirect_uri", .string("The authorization request's.")),
            .optional("code_verifier", .string("PKCE (RFC 7636).")), .optional("refresh_token", .string("The refresh token.")),
            .optional("scope", .string("A narrower scope for a refresh.")), .optional("client_id", .string("The client.")),
            .optional("client_secret", .string("client_secret_post.")),
        ])
        return [
            Route(method: "GET", path: Path.discovery, summary: "OpenID Provider metadata (Discovery 1.0)", access: .operations, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object("The provider's metadata.", [
                      .required("issuer", .string()), .required("authorization_endpoint", .string()), .required("token_endpoint", .string()),
                      .required("userinfo_endpoint", .string()), .required("jwks_uri", .string()),
                      .required("response_types_supported", .array(.string())), .required("code_challenge_methods_supported", .array(.string())),
                  ])))) { _ throws(AuthError) in
                var response = HTTPResponse.json(200, OIDCDiscovery.document(issuer: flow.issuer).sortedJSONText)
                response.headers += [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=300")]
                return response
            },
            // Answered from the commit of the code's one write, as send-link is: the request
            // threads do not wait on the writer, so one group commit carries many exchanges.
            Route.answeringLater(method: "POST", path: Path.token, summary: "OpenID Connect token endpoint: the code (with PKCE) or a refresh token for tokens", access: .client, status: 200,
                  contract: .init(request: .form(tokenForm), answer: .content(mediaType: "application/json", schema: .object("The tokens (no-store).", [
                      .required("access_token", .string("A JWT, typ at+jwt (RFC 9068).")), .required("token_type", .oneOf(["Bearer"])),
                      .required("expires_in", .integer()), .required("id_token", .string("The ID token, aud the client.")), .required("scope", .string()),
                      .optional("refresh_token", .string("With scope offline_access.")),
                  ])),
                                  otherStatuses: oauthErrors)) { c, done throws(AuthError) in
                let request = c.request
                do throws(OIDCProtocolError) {
                    try flow.token(ActionPages.formPairs(request.body), authorization: request.headers["authorization"]) { result in
                        done(.success(oauth(request) { () throws(OIDCProtocolError) in try result.get() }))
                    }
                } catch {
                    done(.success(oauth(request) { () throws(OIDCProtocolError) in throw error }))
                }
            },
            Route(method: "GET", path: Path.userinfo, summary: "OpenID Connect userinfo: the claims the access token's scopes allow", access: .client, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object("The claims the token's scopes allow.", [
                      .required("sub", .string()), .optional("email", .string()), .optional("email_verified", .boolean()), .optional("name", .string()),
                  ])),
                                  otherStatuses: [401: "invalid_token, with WWW-Authenticate: Bearer."])) { c throws(AuthError) in
                oauth(c.request) { () throws(OIDCProtocolError) in try flow.userinfo(authorization: c.request.headers["authorization"]) }
            },
            Route(method: "POST", path: Path.userinfo, summary: "OpenID Connect userinfo, by POST", access: .client, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object("The claims the token's scopes allow.", [
                      .required("sub", .string()), .optional("email", .string()), .optional("email_verified", .boolean()), .optional("name", .string()),
                  ])),
                                  otherStatuses: [401: "invalid_token, with WWW-Authenticate: Bearer."])) { c throws(AuthError) in
                oauth(c.request) { () throws(OIDCProtocolError) in try flow.userinfo(authorization: c.request.headers["authorization"]) }
            },
            Route(method: "POST", path: Path.revocation, summary: "Token revocation (RFC 7009): a refresh or access token of the client", access: .client, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("token", .string("The token.")), .optional("token_type_hint", .string("Ignored: both kinds are tried.")),
                          .optional("client_id", .string("The client.")), .optional("client_secret", .string("client_secret_post.")),
                      ])),
                      otherStatuses: oauthErrors)) { c throws(AuthError) in
                oauth(c.request) { () throws(OIDCProtocolError) in
                    try flow.revoke(ActionPages.formPairs(c.request.body), authorization: c.request.headers["authorization"])
                    return nil
                }
            },
            Route(method: "GET", path: "/v1/me/oidc/consents", summary: "The clients the user consented to", access: .user, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object([
                      .required("consents", .array(.object([
                          .required("clientId", .string()), .required("scopes", .array(.string())), .required("grantedAt", .integer()),
                      ]))),
                  ])))) { c throws(AuthError) in
                let consents = try flow.consents(idToken: try c.idToken()).map { consent -> JSONValue in
                    .object(["clientId": .string(consent.clientID), "scopes": .array(consent.scopes.map(JSONValue.string)), "grantedAt": .integer(consent.grantedAt)])
                }
                return .json(200, JSONValue.object(["consents": .array(consents)]).sortedJSONText)
            },
            Route(method: "DELETE", path: "/v1/me/oidc/consents/{clientId}", summary: "Withdraws the user's consent to a client", access: .user, status: 204,
                  contract: .init(answer: .noContent, errors: [.notFound])) { c throws(AuthError) in
                guard try flow.withdrawConsent(idToken: try c.idToken(), clientID: c.parameters["clientId"] ?? "") else {
                    throw AuthError(.notFound, code: .notFound, message: "There is no consent to that client.")
                }
                return HTTPResponse(status: 204)
            },
        ]
    }

    /// An OAuth endpoint's answer: the JSON (none for nil), or its error, never cached; open to
    /// pages of any origin (a single-page app's token request), with no credentials.
    private static func oauth(_ request: HTTPRequest, _ body: () throws(OIDCProtocolError) -> JSONValue?) -> HTTPResponse {
        var response: HTTPResponse
        do {
            response = try body().map { .json(200, $0.sortedJSONText) } ?? HTTPResponse(status: 200)
        } catch {
            response = .json(error.status, error.body.sortedJSONText)
            if let challenge = error.challenge { response.headers.append(("WWW-Authenticate", challenge)) }
        }
        response.headers += [("Cache-Control", "no-store"), ("Pragma", "no-cache"), ("Access-Control-Allow-Origin", "*")]
        return response
    }
}
