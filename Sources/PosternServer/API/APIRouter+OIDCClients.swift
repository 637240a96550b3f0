import PosternAPI
import PosternCore

extension APIRouter {
    /// The admin API's OpenID Connect clients (`service.oidcClients`): register, list, remove, and
    /// give a new secret. A secret is answered once and never again.
    static func oidcClientRoutes(_ runtime: ServerContext) -> [Route] {
        let clients = runtime.service.oidcClients
        let clientID = ["clientId": JSONSchema.string("The client's `client_id`.")]
        return [
            Route(method: "GET", path: "/v1/admin/oidc/clients", summary: "The registered OpenID Connect clients (never their secrets)",
                  access: .admin, status: 200, contract: .init(answer: .json(OIDCClientListBody.self))) { _ throws(AuthError) in
                .body(200, OIDCClientListBody(clients: try clients.list().map(OIDCClientBody.init)))
            },
            Route(method: "POST", path: "/v1/admin/oidc/clients", summary: "Register an OpenID Connect client (its secret is answered once)",
                  access: .admin, status: 201,
                  contract: .init(request: .json(OIDCClientRequestBody.self), answer: .json(OIDCClientSecretBody.self),
                                  errors: [.invalidArgument], links: .administeringOIDCClient)) { c throws(AuthError) in
                let body = try c.body(OIDCClientRequestBody.self)
                let added = try clients.add(
                    name: body.name, redirectURIs: body.redirectUris, public: body.public ?? false, firstParty: body.firstParty ?? false,
                    postLogoutRedirectURIs: body.postLogoutRedirectUris ?? [], allowNoPKCE: body.allowNoPkce ?? false, scopes: body.scopes,
                    idTokenSignedResponseAlg: body.idTokenSignedResponseAlg)
                return .body(201, OIDCClientSecretBody(added))
            },
            Route(method: "DELETE", path: "/v1/admin/oidc/clients/{clientId}",
                  summary: "Remove an OpenID Connect client: its consents and codes go, its refresh tokens are revoked", access: .admin,
                  status: 204, contract: .init(answer: .noContent, errors: [.notFound], pathParameters: clientID)) { c throws(AuthError) in
                guard try clients.remove(id: c.parameters["clientId"] ?? "") else { throw AuthError.oidcClientNotFound }
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/admin/oidc/clients/{clientId}/rotate-secret",
                  summary: "Give a confidential OpenID Connect client a new secret (the old one stops at once)", access: .admin, status: 200,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(OIDCClientSecretBody.self),
                                  errors: [.invalidArgument, .notFound], pathParameters: clientID)) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                guard let rotated = try clients.rotateSecret(id: c.parameters["clientId"] ?? "") else { throw AuthError.oidcClientNotFound }
                return .body(200, OIDCClientSecretBody(rotated))
            },
        ]
    }
}

extension [RouteContract.Link] {
    /// The client a registration answered, as the admin API keeps it.
    static var administeringOIDCClient: Self {
        [
            .init(name: "rotateSecret", method: "POST", path: "/v1/admin/oidc/clients/{clientId}/rotate-secret",
                  description: "Give the client a new secret.", parameters: ["path.clientId": "$response.body#/client/clientId"]),
            .init(name: "remove", method: "DELETE", path: "/v1/admin/oidc/clients/{clientId}", description: "Remove the client.",
                  parameters: ["path.clientId": "$response.body#/client/clientId"]),
        ]
    }
}

extension OIDCClientBody {
    /// The body of `client` (never a secret: it holds none).
    public init(_ client: OIDCClient) {
        self.init(
            clientId: client.clientID, name: client.name, redirectUris: client.redirectURIs, postLogoutRedirectUris: client.postLogoutRedirectURIs,
            public: client.isPublic, firstParty: client.firstParty, allowNoPkce: client.allowNoPKCE, scopes: client.scopes,
            idTokenSignedResponseAlg: client.idTokenSignedResponseAlg.rawValue, createdAt: UTCTimestamp.iso8601(client.createdAt))
    }
}

extension OIDCClientSecretBody {
    /// The body of a registration or a rotation: the client and its secret, this once.
    public init(_ credentials: OIDCClientCredentials) {
        self.init(client: OIDCClientBody(credentials.client), clientSecret: credentials.secret)
    }
}
