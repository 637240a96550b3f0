import Foundation
import PosternAPI
import PosternCrypto

/// An error of the token, userinfo or revocation endpoint, as OAuth answers it (RFC 6749 §5.2,
/// RFC 6750 §3.1): `{"error", "error_description"}` with its status. Never carries a secret.
public struct OIDCProtocolError: Error, Sendable, Hashable {
    /// The OAuth error code (`invalid_grant`, `invalid_client`, `invalid_token`, …).
    public let error: String
    /// A sentence for the client's developer.
    public let description: String
    /// The HTTP status.
    public let status: Int
    /// The `WWW-Authenticate` header to send, if any.
    public let challenge: String?

    init(_ error: String, _ description: String, status: Int = 400, challenge: String? = nil) {
        self.error = error
        self.description = description
        self.status = status
        self.challenge = challenge
    }

    static func invalidRequest(_ description: String) -> OIDCProtocolError { OIDCProtocolError("invalid_request", description) }
    static func invalidGrant(_ description: String) -> OIDCProtocolError { OIDCProtocolError("invalid_grant", description) }
    static func invalidClient(basicTried: Bool) -> OIDCProtocolError {
        OIDCProtocolError(
            "invalid_client", "client authentication failed", status: 401, challenge: basicTried ? #"Basic realm="postern""# : nil)
    }
    static func invalidToken(_ description: String) -> OIDCProtocolError {
        OIDCProtocolError("invalid_token", description, status: 401, challenge: #"Bearer error="invalid_token""#)
    }
    /// The store failed: try again.
    static func unavailable(_ error: AuthError) -> OIDCProtocolError {
        error.kind == .unavailable
            ? OIDCProtocolError("temporarily_unavailable", "the service is unavailable, try again", status: 503)
            : OIDCProtocolError("server_error", "the request failed", status: 500)
    }

    /// The answer's body.
    public var body: JSONValue { .object(["error": .string(error), "error_description": .string(description)]) }
}

/// What an OpenID Connect grant carries into the refresh tokens it gives: the `amr` and the
/// scopes, kept in the refresh token's `method` (`oidc:link,otp:openid email`) so that a refresh
/// gives the same claims without a column of its own.
struct OIDCGrant: Sendable, Hashable {
    var methods: [String]
    var scopes: [String]

    static let prefix = "oidc:"

    var storedMethod: String { Self.prefix + methods.joined(separator: ",") + ":" + scopes.joined(separator: " ") }

    init(methods: [String], scopes: [String]) {
        self.methods = methods
        self.scopes = scopes
    }

    init?(storedMethod: String) {
        guard storedMethod.hasPrefix(Self.prefix) else { return nil }
        let parts = storedMethod.dropFirst(Self.prefix.count).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        methods = parts[0].split(separator: ",").map(String.init)
        scopes = parts[1].split(separator: " ").map(String.init)
    }
}

extension OIDCFlow {
    /// How long an access token lives: short, since it is a JWT verified offline, and revoking its
    /// grant ends only the refresh tokens (userinfo also checks the account at once).
    static let accessTokenLifetime: Int64 = 600

    /// The audience of the access tokens: the provider's userinfo endpoint, the one resource
    /// server Postern runs (not the API's audience, which its ID tokens carry).
    var accessTokenAudience: String { issuer + OIDCDiscovery.Path.userinfo }

    // MARK: the token endpoint

    /// `POST /oidc/token`: the authorization code grant (with PKCE and the client's authentication)
    /// and the refresh token grant. `parameters`: the form, in order (a repeated name is refused);
    /// `authorization`: the `Authorization` header, for `client_secret_basic`.
    /// - Throws: `OIDCProtocolError` as OAuth answers it.
    public func token(_ parameters: [(name: String, value: String)], authorization: String?) throws(OIDCProtocolError) -> JSONValue {
        try AnswerSlot<JSONValue, OIDCProtocolError>.waiting(missing: OIDCProtocolError("server_error", "the request failed", status: 500)) {
            done throws(OIDCProtocolError) in try token(parameters, authorization: authorization, then: done)
        }
    }

    /// ``token(_:authorization:)`` handing its answer to `then` instead of returning it: a code's
    /// redemption after the commit of its one write (on the store's writer thread when the store
    /// queues writes, as send-link answers), a refresh from another thread. What is wrong before
    /// anything is written (the form, the client's authentication) is thrown, and `then` is not
    /// called. The caller's thread never waits on a write.
    public func token(
        _ parameters: [(name: String, value: String)], authorization: String?,
        then: @escaping @Sendable (Result<JSONValue, OIDCProtocolError>) -> Void
    ) throws(OIDCProtocolError) {
        let form = try Self.single(parameters)
        let client = try authenticate(form: form, authorization: authorization)
        switch form["grant_type"] {
        case "authorization_code":
            try redeem(form: form, client: client, then: then)
        case "refresh_token":
            DispatchQueue.global().async { [self] in
                then(Result { () throws(OIDCProtocolError) in try refresh(form: form, client: client) })
            }
        case nil: throw .invalidRequest("grant_type is missing")
        case .some: throw OIDCProtocolError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        }
    }

    /// The authorization code grant: the code's bindings (client, redirect URI, PKCE) checked
    /// before it is consumed; consumed once, atomically; a replay revokes the refresh tokens the
    /// code gave (RFC 6749 §4.1.2). One transaction; the tokens are signed after its commit.
    private func redeem(
        form: [String: String], client: OIDCClient, then: @escaping @Sendable (Result<JSONValue, OIDCProtocolError>) -> Void
    ) throws(OIDCProtocolError) {
        guard let code = form["code"], !code.isEmpty else { throw .invalidRequest("code is missing") }
        let hash = SHA256.hash(code)
        let now = context.clock.unixSeconds()
        let events = context.events
        let redirectURI = form["redirect_uri"]
        let verifier = form["code_verifier"]
        // The refresh token is stored with the code's consumption, in one transaction: a replay
        // that comes after finds it and revokes it.
        let refresh: String
        do throws(AuthError) { refresh = try Self.randomToken() } catch { throw .unavailable(error) }
        let lifetime = context.config.refreshTokenLifetime
        let clientID = client.clientID
        // The code's bindings are checked before it is consumed (a refused redemption consumes
        // nothing), then it is consumed atomically.
        let body = { @Sendable (tx: any StoreWriter) throws -> Result<(Account, AuthorizationCodeRecord), OIDCProtocolError> in
            let tx: Writes = tx
            guard let found = try tx.authorizationCode(hash: hash) else { return .failure(.invalidGrant("the code is unknown or expired")) }
            if let refusal = found.refusal(client: clientID, redirectURI: redirectURI, codeVerifier: verifier, now: now) {
                return .failure(.invalidGrant(Self.sentence(refusal)))
            }
            switch try tx.consumeAuthorizationCode(hash: hash, at: now) {
            case nil:
                return .failure(.invalidGrant("the code is unknown or expired"))
            case .replayed(let record):
                if try Self.revokeGrant(record.refreshFamily, uid: record.uid, clientID: record.clientID, now: now, tx: tx) {
                    try events.record(.sessionRevoked(uid: record.uid, reason: "oidcCodeReplayed"), tx: tx, now: now)
                }
                return .failure(.invalidGrant("the code was used already"))
            case .consumed(let record):
                guard let account = try tx.account(uid: record.uid), !account.disabled else {
                    return .failure(.invalidGrant("the account cannot sign in"))
                }
                if record.scopes.contains("offline_access") {
                    let method = OIDCGrant(methods: record.methods, scopes: record.scopes).storedMethod
                    try tx.insertRefreshToken(
                        RefreshTokenRecord(
                            hash: SHA256.hash(refresh), family: record.refreshFamily, uid: account.uid, authTime: record.authTime,
                            method: method, createdAt: now, expiresAt: now + lifetime, clientID: clientID))
                    // The user's sessions list the grant, marked by its client.
                    _ = try SessionFlow.newDeviceSession(
                        family: record.refreshFamily, uid: account.uid, method: method, clientID: clientID, origin: nil, now: now,
                        expiresAt: now + lifetime, tx)
                }
                return .success((account, record))
            }
        }
        let hooked = context.hooks.isOn(.tokenClaims)
        context.write(body) { [self] committed in
            // The tokens are signed after the commit, on the writer's thread when the store has
            // one: a token_claims call must not wait there.
            let finish = { @Sendable [self] in then(Result { () throws(OIDCProtocolError) in
                let outcome: Result<(Account, AuthorizationCodeRecord), OIDCProtocolError>
                switch committed {
                case .success(let value): outcome = value
                case .failure(let error): throw .unavailable(error)
                }
                let (account, record) = try outcome.get()
                return try answer(
                    account: account, client: client, grant: OIDCGrant(methods: record.methods, scopes: record.scopes),
                    authTime: record.authTime, nonce: record.nonce, family: record.refreshFamily,
                    refreshToken: record.scopes.contains("offline_access") ? refresh : nil, now: now)
            }) }
            if hooked { DispatchQueue.global().async(execute: finish) } else { finish() }
        }
    }

    /// The refresh token grant: only the client's own tokens, rotated with the API's rule
    /// (``SessionFlow/rotate(_:clientID:issue:)``: reuse revokes the family); `scope` may narrow.
    private func refresh(form: [String: String], client: OIDCClient) throws(OIDCProtocolError) -> JSONValue {
        guard let token = form["refresh_token"], !token.isEmpty else { throw .invalidRequest("refresh_token is missing") }
        let asked = form["scope"].map { $0.split(separator: " ").map(String.init) }
        let now = context.clock.unixSeconds()
        let lifetime = context.config.refreshTokenLifetime
        let clientID = client.clientID
        let issued: (Account, RefreshTokenRecord, OIDCGrant, String)
        do {
            issued = try sessions.rotate(token, clientID: clientID) { account, record, lineage, tx, _ in
                guard let grant = OIDCGrant(storedMethod: record.method) else { throw AuthError.invalidRefreshToken }
                switch lineage {
                case .again(let successor, _):
                    return (account, record, grant, successor)
                case .successor(let successor, let family):
                    try tx.insertRefreshToken(
                        RefreshTokenRecord(
                            hash: SHA256.hash(successor), family: family, uid: account.uid, authTime: record.authTime, method: record.method,
                            createdAt: now, expiresAt: now + lifetime, clientID: clientID))
                    _ = try SessionFlow.sessionID(
                        of: family, uid: account.uid, method: record.method, clientID: clientID, origin: nil, now: now,
                        expiresAt: now + lifetime, tx)
                    return (account, record, grant, successor)
                }
            }
        } catch where error.kind == .unavailable || error.kind == .internalFailure {
            throw .unavailable(error)
        } catch {
            throw .invalidGrant("the refresh token is unknown, expired or revoked")
        }
        let (account, record, stored, successor) = issued
        var grant = stored
        if let asked {
            guard Set(asked).isSubset(of: stored.scopes) else { throw OIDCProtocolError("invalid_scope", "scope asks for more than was granted") }
            grant.scopes = stored.scopes.filter(asked.contains)
        }
        return try answer(
            account: account, client: client, grant: grant, authTime: record.authTime, nonce: nil, family: record.family,
            refreshToken: successor, now: now)
    }

    /// The token response: an ID token and an access token signed now with the client's
    /// algorithm (``OIDCClient/idTokenSignedResponseAlg``), and the refresh token.
    private func answer(
        account: Account, client: OIDCClient, grant: OIDCGrant, authTime: Int64, nonce: String?, family: String, refreshToken: String?,
        now: Int64
    ) throws(OIDCProtocolError) -> JSONValue {
        let signer = context.keys.current.idTokenSigner(client.idTokenSignedResponseAlg)
        // The operator's claims (token_claims, asked at each issue and refresh, outside any
        // transaction), under Postern's own: a hook may not name those.
        let extra: [String: JSONValue]
        do throws(AuthError) {
            extra = try context.hooks.claims(HookSubject(
                uid: account.uid, email: account.email?.address, method: grant.methods.joined(separator: ","), isNewUser: false,
                clientID: client.clientID))
        } catch {
            throw .unavailable(error)
        }
        var idClaims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(account.uid), "aud": .string(client.clientID), "azp": .string(client.clientID),
            "iat": .integer(now), "exp": .integer(now + context.config.idTokenLifetime), "auth_time": .integer(authTime),
            "amr": .array(grant.methods.map(JSONValue.string)),
        ]
        if let nonce { idClaims["nonce"] = .string(nonce) }
        for (name, value) in Self.userClaims(account, scopes: grant.scopes) { idClaims[name] = value }
        idClaims.merge(extra) { ours, _ in ours }
        var accessClaims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(account.uid), "aud": .string(accessTokenAudience), "client_id": .string(client.clientID),
            "scope": .string(grant.scopes.joined(separator: " ")), "iat": .integer(now), "exp": .integer(now + Self.accessTokenLifetime),
            "auth_time": .integer(authTime), "jti": .string((try? FlowContext.newID()) ?? family + String(now)), "sid": .string(family),
            "sv": .integer(account.sessionVersion),
        ]
        accessClaims.merge(extra) { ours, _ in ours }
        let idToken: String
        let accessToken: String
        do {
            idToken = try JSONWebToken.sign(claims: Data(JSONValue.object(idClaims).sortedJSONText.utf8), with: signer)
            accessToken = try JSONWebToken.sign(claims: Data(JSONValue.object(accessClaims).sortedJSONText.utf8), with: signer, type: .accessToken)
        } catch {
            throw OIDCProtocolError("server_error", "the tokens could not be signed", status: 500)
        }
        var body: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .integer(Self.accessTokenLifetime),
            "id_token": .string(idToken), "scope": .string(grant.scopes.joined(separator: " ")),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        return .object(body)
    }

    /// The claims about the person that `scopes` allow: `email` and `email_verified` (scope
    /// `email`), `name` (scope `profile`, when the account has a display name).
    static func userClaims(_ account: Account, scopes: [String]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        if scopes.contains("email"), let email = account.email {
            claims["email"] = .string(email.address)
            claims["email_verified"] = .bool(account.emailVerified)
        }
        if scopes.contains("profile"), let name = account.displayName { claims["name"] = .string(name) }
        return claims
    }

    // MARK: userinfo

    /// `GET`/`POST /oidc/userinfo` with `Authorization: Bearer <access token>`: the claims its
    /// scopes allow, for an account that is still there, enabled, and not signed out everywhere
    /// since the token was issued.
    /// - Throws: `OIDCProtocolError` (`invalid_token`, 401).
    public func userinfo(authorization: String?) throws(OIDCProtocolError) -> JSONValue {
        guard let header = authorization, header.lowercased().hasPrefix("bearer ") else {
            throw OIDCProtocolError("invalid_request", "an access token is required", status: 401, challenge: "Bearer")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard let claims = verifiedAccessToken(token), let uid = claims["sub"] as? String,
            let version = (claims["sv"] as? NSNumber)?.int64Value, let family = claims["sid"] as? String
        else { throw .invalidToken("the access token is malformed, expired or not this provider's") }
        let found: (Account?, Bool)
        do {
            found = try context.read { (tx: Reads) in (try tx.account(uid: uid), try tx.isRefreshFamilyRevoked(family)) }
        } catch {
            throw .unavailable(error)
        }
        guard let account = found.0, !account.disabled, account.sessionVersion == version else {
            throw .invalidToken("the access token's account cannot sign in")
        }
        guard !found.1 else { throw .invalidToken("the access token's grant was revoked") }
        let scopes = (claims["scope"] as? String ?? "").split(separator: " ").map(String.init)
        var body = Self.userClaims(account, scopes: scopes)
        body["sub"] = .string(account.uid)
        return .object(body)
    }

    /// The claims of an access token this provider signed (`typ` `at+jwt`, its issuer and audience,
    /// not expired); nil otherwise.
    func verifiedAccessToken(_ token: String) -> [String: Any]? {
        guard let claims = verifiedClaims(token, type: JSONWebToken.TokenType.accessToken.rawValue),
            claims["aud"] as? String == accessTokenAudience, let exp = (claims["exp"] as? NSNumber)?.int64Value,
            context.clock.unixSeconds() < exp
        else { return nil }
        return claims
    }

    /// The claims of a token signed by a key of the JWKS (ES256 or RS256: whichever the client it
    /// was issued to is registered for), of `type`, from this issuer; nil otherwise.
    func verifiedClaims(_ token: String, type: String) -> [String: Any]? {
        let ring = context.keys.current
        guard let parsed = try? JSONWebToken.parse(token), (parsed.type ?? "JWT") == type,
            let key = ring.publishedKey(keyID: parsed.keyID), parsed.isSigned(by: key),
            let claims = try? JSONSerialization.jsonObject(with: parsed.claims) as? [String: Any], claims["iss"] as? String == issuer
        else { return nil }
        return claims
    }

    /// An `id_token_hint`: an ID token this provider issued to a client (expired or not, OpenID
    /// Connect Core §3.1.2.1): its subject and client; nil for anything else (the API's own ID
    /// tokens, whose audience is the issuer, included).
    func verifiedHint(_ token: String) -> (subject: String, clientID: String)? {
        guard let claims = verifiedClaims(token, type: JSONWebToken.TokenType.jwt.rawValue), let subject = claims["sub"] as? String,
            let audience = claims["aud"] as? String, audience != issuer
        else { return nil }
        return (subject, audience)
    }

    // MARK: revocation

    /// `POST /oidc/revoke` (RFC 7009): the client's refresh token ends its family; the client's
    /// access token ends the refresh tokens of its grant (the access token itself lives its few
    /// minutes). Another client's token, or an unknown one, changes nothing; the answer is the same.
    /// - Throws: `OIDCProtocolError` (`invalid_client`, `invalid_request`).
    public func revoke(_ parameters: [(name: String, value: String)], authorization: String?) throws(OIDCProtocolError) {
        let form = try Self.single(parameters)
        let client = try authenticate(form: form, authorization: authorization)
        guard let token = form["token"], !token.isEmpty else { throw .invalidRequest("token is missing") }
        // An access token names its grant's refresh family (`sid`) and its account.
        let access = verifiedClaims(token, type: JSONWebToken.TokenType.accessToken.rawValue).flatMap { claims -> (String, String)? in
            guard claims["client_id"] as? String == client.clientID, let family = claims["sid"] as? String, let uid = claims["sub"] as? String
            else { return nil }
            return (family, uid)
        }
        let hash = SHA256.hash(token)
        let clientID = client.clientID
        let events = context.events
        let now = context.clock.unixSeconds()
        do {
            try context.write { (tx: Writes) in
                var doomed = access
                if doomed == nil, let record = try tx.refreshToken(hash: hash), record.clientID == clientID { doomed = (record.family, record.uid) }
                if let (family, uid) = doomed, try Self.revokeGrant(family, uid: uid, clientID: clientID, now: now, tx: tx) {
                    try events.record(.sessionRevoked(uid: uid, reason: "oidcRevoked"), tx: tx, now: now)
                }
            }
        } catch {
            throw .unavailable(error)
        }
    }

    /// Revokes a grant: its refresh tokens, and — so that its access tokens die too, when it gave
    /// no refresh token — a revoked marker of the family that outlives every access token it
    /// gave (userinfo asks ``SessionReader/isRefreshFamilyRevoked(_:)``). True when something
    /// live was revoked.
    static func revokeGrant(_ family: String, uid: String, clientID: String, now: Int64, tx: any SessionWriter) throws -> Bool {
        let revoked = try tx.revokeRefreshFamily(family)
        if try !tx.isRefreshFamilyRevoked(family) {
            try tx.insertRefreshToken(
                RefreshTokenRecord(
                    hash: SHA256.hash(Array("postern-oidc-revoked-grant|\(family)".utf8)), family: family, uid: uid, authTime: now,
                    method: OIDCGrant.prefix + "revoked", createdAt: now, expiresAt: now + accessTokenLifetime + 60, revoked: true,
                    clientID: clientID))
            return true
        }
        return revoked > 0
    }

    // MARK: client authentication

    /// The client a token or revocation request comes from: `client_secret_basic` (the
    /// `Authorization` header, its parts form-encoded, RFC 6749 §2.3.1), `client_secret_post`, or
    /// a public client's `client_id` alone. One method per request.
    func authenticate(form: [String: String], authorization: String?) throws(OIDCProtocolError) -> OIDCClient {
        var clientID = form["client_id"]
        var secret = form["client_secret"]
        let basicTried = authorization?.lowercased().hasPrefix("basic ") == true
        if let authorization, basicTried {
            guard secret == nil else { throw .invalidRequest("use one client authentication method, not two") }
            guard let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":"),
                let id = PercentDecoding.decode(pair[..<colon], plusIsSpace: true),
                let password = PercentDecoding.decode(pair[pair.index(after: colon)...], plusIsSpace: true)
            else { throw .invalidClient(basicTried: true) }
            if let clientID, clientID != id { throw .invalidRequest("client_id differs from the Authorization header's") }
            clientID = id
            secret = password
        }
        guard let clientID, !clientID.isEmpty else { throw .invalidClient(basicTried: basicTried) }
        let client: OIDCClient?
        do { client = try context.read { (tx: Reads) in try tx.oidcClient(id: clientID) } } catch { throw .unavailable(error) }
        guard let client else { throw .invalidClient(basicTried: basicTried) }
        if client.isPublic {
            guard secret == nil else { throw .invalidClient(basicTried: basicTried) }
        } else {
            guard let secret, client.acceptsSecret(secret) else { throw .invalidClient(basicTried: basicTried) }
        }
        return client
    }

    /// The form as a dictionary; a name given twice is `invalid_request` (RFC 6749 §3.2).
    static func single(_ parameters: [(name: String, value: String)]) throws(OIDCProtocolError) -> [String: String] {
        var form: [String: String] = [:]
        for (name, value) in parameters {
            guard form[name] == nil else { throw .invalidRequest("\(name) is given more than once") }
            form[name] = value
        }
        return form
    }

    /// Why a code was refused, for the client's developer (`error_description`).
    static func sentence(_ refusal: AuthorizationCodeRecord.RedemptionRefusal) -> String {
        switch refusal {
        case .expired: "the code has expired"
        case .otherClient: "the code was issued to another client"
        case .redirectURIMismatch: "redirect_uri is not the authorization request's"
        case .verifierMissing: "code_verifier is missing or malformed"
        case .verifierMismatch: "code_verifier does not match the code_challenge"
        case .verifierWithoutChallenge: "code_verifier was sent for a code asked without a code_challenge"
        }
    }
}
