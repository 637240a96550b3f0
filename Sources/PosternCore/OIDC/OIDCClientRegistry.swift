import PosternCrypto

/// A client just registered, or given a new secret, and that secret: shown this once (the store
/// keeps only its SHA-256). No secret for a public client.
public struct OIDCClientCredentials: Sendable {
    public let client: OIDCClient
    /// 32 random bytes, base64url (43 characters); nil for a public client.
    public let secret: String?

    public init(client: OIDCClient, secret: String?) {
        self.client = client
        self.secret = secret
    }
}

/// The OpenID Connect provider's registered relying parties, as operators keep them (`postern oidc
/// clients`, `/v1/admin/oidc/clients`): register one with an id and (a confidential one) a secret
/// Postern makes, list them, remove one with everything it was given, give one a new secret.
public final class OIDCClientRegistry: Sendable {
    /// The persisters this flow's transactions use.
    typealias Writes = any OIDCWriter
    /// What this flow's reads use.
    typealias Reads = any OIDCReader

    let context: FlowContext

    init(context: FlowContext) { self.context = context }

    /// Registers a client: a random id (16 bytes, base64url) and, for a confidential client, a
    /// random secret (32 bytes, base64url) stored only as its SHA-256.
    /// - Throws: `AuthError.invalidArgument` naming the field that is wrong
    ///   (``OIDCClientRegistration/validated()``), `unavailable`.
    public func add(
        name: String, redirectURIs: [String], public isPublic: Bool = false, firstParty: Bool = false,
        postLogoutRedirectURIs: [String] = [], allowNoPKCE: Bool = false, scopes: [String]? = nil, idTokenSignedResponseAlg: String? = nil
    ) throws(AuthError) -> OIDCClientCredentials {
        let registration: OIDCClientRegistration
        do {
            registration = try OIDCClientRegistration(
                name: name, redirectURIs: redirectURIs, isPublic: isPublic, firstParty: firstParty,
                postLogoutRedirectURIs: postLogoutRedirectURIs, allowNoPKCE: allowNoPKCE, scopes: scopes,
                idTokenSignedResponseAlg: idTokenSignedResponseAlg
            ).validated()
        } catch {
            throw .invalidArgument(error.description)
        }
        let secret = isPublic ? nil : try Self.newSecret()
        let client = OIDCClient(
            clientID: try FlowContext.newID(), name: registration.name,
            authentication: secret.map { .secretHash(OIDCClient.secretHash(of: $0)) } ?? .publicClient,
            redirectURIs: registration.redirectURIs, postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
            scopes: registration.scopes ?? OIDCClient.defaultScopes, firstParty: registration.firstParty,
            allowNoPKCE: registration.allowNoPKCE, idTokenSignedResponseAlg: registration.signingAlgorithm ?? .es256,
            createdAt: context.clock.unixSeconds())
        try context.write { (tx: Writes) in try tx.insertOIDCClient(client) }
        return OIDCClientCredentials(client: client, secret: secret)
    }

    /// Every registered client, oldest first.
    /// - Throws: `AuthError.unavailable`.
    public func list() throws(AuthError) -> [OIDCClient] {
        try context.read { (tx: Reads) in try tx.oidcClients() }
    }

    /// The client `id`, if registered.
    /// - Throws: `AuthError.unavailable`.
    public func client(id: String) throws(AuthError) -> OIDCClient? {
        try context.read { (tx: Reads) in try tx.oidcClient(id: id) }
    }

    /// Removes a client: its consents and codes go, the refresh tokens issued to it are revoked.
    /// False when there is no such client.
    /// - Throws: `AuthError.unavailable`.
    public func remove(id: String) throws(AuthError) -> Bool {
        try context.write { (tx: Writes) in try tx.deleteOIDCClient(id: id) }
    }

    /// Gives a confidential client a new secret; the old one stops working at once (a relying
    /// party is reconfigured with the new one). Nil when there is no such client.
    /// - Throws: `AuthError.invalidArgument` for a public client (it has no secret), `unavailable`.
    public func rotateSecret(id: String) throws(AuthError) -> OIDCClientCredentials? {
        let secret = try Self.newSecret()
        let hash = OIDCClient.secretHash(of: secret)
        let rotated = try context.write { (tx: Writes) -> OIDCClient? in
            guard let client = try tx.oidcClient(id: id) else { return nil }
            guard !client.isPublic else { throw AuthError.invalidArgument("clientId: a public client has no secret to rotate.") }
            let updated = OIDCClient(
                clientID: client.clientID, name: client.name, authentication: .secretHash(hash), redirectURIs: client.redirectURIs,
                postLogoutRedirectURIs: client.postLogoutRedirectURIs, scopes: client.scopes, firstParty: client.firstParty,
                allowNoPKCE: client.allowNoPKCE, idTokenSignedResponseAlg: client.idTokenSignedResponseAlg, createdAt: client.createdAt)
            try tx.updateOIDCClient(updated)
            return updated
        }
        return rotated.map { OIDCClientCredentials(client: $0, secret: secret) }
    }

    /// A new client secret: 32 random bytes, base64url.
    static func newSecret() throws(AuthError) -> String { try OIDCFlow.randomToken() }
}
