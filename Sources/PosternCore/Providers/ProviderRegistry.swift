import Foundation
import PosternCrypto
import Synchronization

/// Why a provider's token or server could not be used.
public enum ProviderCheckError: Error, Sendable, Hashable {
    /// The token was refused (the API's `INVALID_PROVIDER_TOKEN`); the case is for logs and tests.
    case refused(ProviderTokenRefusal)
    /// The provider's keys, discovery document or token endpoint could not be had (the API's
    /// `UNAVAILABLE`); names the provider and the host at most, never a secret or a token.
    case unavailable(String)
}

/// The configured identity providers (`--identity-providers`) with what Postern learns from
/// them at run time: their keys (one ``ProviderKeyCache`` each, behind a lock), their discovery
/// documents, and the web flow's requests. Every network request goes through `http`.
public final class ProviderRegistry: Sendable {
    /// The providers of the file, in its order.
    public let providers: [IdentityProvider]
    let clientSecrets: [String: String]
    let http: any ProviderHTTP
    /// What the web flow's discovery lookups call now (``verify(_:provider:nonce:now:)`` is given its `now`).
    private let clock: any WallClock
    /// Each provider's caches, by `id`.
    private let states: [String: ProviderState]

    /// No providers: every provider request answers `PROVIDER_NOT_CONFIGURED`.
    public static let none = ProviderRegistry(providers: [], clientSecrets: [:], http: NoProviderHTTP())

    /// Sign in with Apple's web flow endpoints (Apple publishes no discovery document for them).
    static let appleAuthorizationEndpoint = "https://appleid.apple.com/auth/authorize"
    static let appleTokenEndpoint = "https://appleid.apple.com/auth/token"
    /// Google's, as its discovery document names them.
    static let googleAuthorizationEndpoint = "https://accounts.google.com/o/oauth2/v2/auth"
    static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"

    /// `clientSecrets`: the web flow's client secret by provider `id`, read from each
    /// `clientSecretFile` at start-up. `clock` dates the discovery documents the web flow uses.
    public init(providers: [IdentityProvider], clientSecrets: [String: String], http: any ProviderHTTP, clock: any WallClock = SystemClock()) {
        self.providers = providers
        self.clientSecrets = clientSecrets
        self.http = http
        self.clock = clock
        states = Dictionary(providers.map { ($0.id, ProviderState()) }, uniquingKeysWith: { first, _ in first })
    }

    /// The provider a request names: its `id` (`apple`, `google`, `acme`) or its account name
    /// (`oidc:acme`); nil when none is configured so.
    public func provider(named name: String) -> IdentityProvider? {
        providers.first { $0.id == name || $0.accountProviderName == name }
    }

    /// The providers the hosted sign-in page offers a button for (those with a `clientId`).
    public var webProviders: [IdentityProvider] { providers.filter { $0.clientID != nil } }

    /// Checks `token` from `provider` at `now` (``ProviderTokenVerifier``) with the provider's
    /// keys: from the cache while fresh, fetched when missing or stale, and fetched again for an
    /// unknown `kid` at most once a minute; the token is then checked once more.
    /// - Throws: `refused` with the check that failed; `unavailable` when no keys could be had.
    public func verify(_ token: String, provider: IdentityProvider, nonce: String?, now: Int64) throws(ProviderCheckError) -> ProviderIdentity {
        guard let parsed = try? JSONWebToken.parse(token) else { throw .refused(.malformed) }
        return try withKeys(provider, for: parsed, now: now) { keys throws(ProviderTokenRefusal) in
            try ProviderTokenVerifier.verify(token, keys: keys, provider: provider, now: now, nonce: nonce)
        }
    }

    /// Checks one of Apple's server-to-server notifications (the JWS Apple POSTs as `payload`,
    /// or the whole `{"payload": …}` body) at `now`, with the `apple` provider's keys through the
    /// same cache as its ID tokens: signature, `iss`, `aud` one of the provider's `audiences`,
    /// `iat` at most an hour old, `jti` present, and the `events` it carries.
    /// - Throws: `refused` with the check that failed (`expired` for an `iat` over an hour old);
    ///   `unavailable` when `apple` is not configured or its keys could not be had.
    public func verifyAppleNotification(_ payload: String, now: Int64) throws(ProviderCheckError) -> AppleNotification {
        guard let apple = providers.first(where: { $0.kind == .apple }) else { throw .unavailable("apple is not configured") }
        // The header is read again by the verifier; here for the cache's decision.
        guard let header = try? JSONWebToken.parse(AppleNotificationVerifier.jws(of: payload)) else { throw .refused(.malformed) }
        return try withKeys(apple, for: header, now: now) { keys throws(ProviderTokenRefusal) in
            try AppleNotificationVerifier.verify(payload, keys: keys, provider: apple, now: now)
        }
    }

    /// Where the hosted page sends the browser to sign in at `provider` (its discovery document's
    /// `authorization_endpoint`): `response_type=code`, `scope=openid email`, the given `state`,
    /// `nonce`, S256 `codeChallenge` and `redirectURI` (Apple: `response_mode=form_post`, its rule
    /// when the address is asked for).
    ///
    /// The URL's `nonce` is ``ProviderTokenVerifier/expectedNonceClaim(_:provider:)`` of `nonce`
    /// (for Apple its SHA-256 in hex), so the returned ID token checks with
    /// ``verify(_:provider:nonce:now:)`` given the same raw `nonce`, as a native one does.
    /// - Throws: `unavailable` when the provider has no `clientId` or its endpoint cannot be had.
    public func authorizationURL(
        provider: IdentityProvider, redirectURI: String, state: String, nonce: String, codeChallenge: String
    ) throws(ProviderCheckError) -> String {
        guard let clientID = provider.clientID else { throw .unavailable("\(provider.id): no clientId, so no web flow") }
        let endpoint = try endpoints(of: provider).authorization
        return OIDCFlow.redirect(
            endpoint,
            [
                "response_type": "code", "client_id": clientID, "redirect_uri": redirectURI, "scope": "openid email", "state": state,
                "nonce": ProviderTokenVerifier.expectedNonceClaim(nonce, provider: provider), "code_challenge": codeChallenge,
                "code_challenge_method": "S256", "response_mode": provider.kind == .apple ? "form_post" : nil,
            ])
    }

    /// Redeems the web flow's `code` at the provider's token endpoint (client id and secret, the
    /// PKCE verifier, the same `redirectURI`) and answers the ID token it returns (unchecked: the
    /// caller runs ``verify(_:provider:nonce:now:)`` on it).
    ///
    /// With a client secret the client authenticates with HTTP Basic (`client_secret_basic`, the
    /// id and secret form-encoded first as RFC 6749 §2.3.1 says), except at Apple, whose token
    /// endpoint documents `client_id` and `client_secret` as form fields (the secret being the
    /// ES256 JWT the operator makes from their Sign in with Apple key and puts in the file).
    /// Without one it is a public client: `client_id` in the form, PKCE its only proof.
    /// - Throws: `refused(.malformed)` when the provider refuses the code or answers no ID token;
    ///   `unavailable` when it cannot be reached.
    public func redeem(code: String, codeVerifier: String, redirectURI: String, provider: IdentityProvider) throws(ProviderCheckError) -> String {
        guard let clientID = provider.clientID else { throw .unavailable("\(provider.id): no clientId, so no web flow") }
        let endpoint = try endpoints(of: provider).token
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", codeVerifier)]
        var basic: (user: String, password: String)?
        switch (clientSecrets[provider.id], provider.kind) {
        case (let secret?, .apple): fields += [("client_id", clientID), ("client_secret", secret)]
        case (let secret?, _): basic = (OIDCFlow.formEncoded(clientID), OIDCFlow.formEncoded(secret))
        case (nil, _): fields.append(("client_id", clientID))
        }
        let response: ProviderHTTPResponse
        do { response = try http.postForm(endpoint, fields: fields, basic: basic) } catch {
            throw .unavailable("\(provider.id): its token endpoint: \(error.description)")
        }
        if response.status >= 500 || response.status < 200 {
            throw .unavailable("\(provider.id): its token endpoint answered HTTP \(response.status)")
        }
        guard response.status == 200, response.body.count <= ProviderHTTPResponse.bodyLimit,
            let answer = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let idToken = answer["id_token"] as? String, !idToken.isEmpty
        else { throw .refused(.malformed) }
        return idToken
    }

    // MARK: - Keys and discovery

    /// Runs `check` with the provider's keys for `token`'s `kid`. The cache's decision already
    /// asks for a fetch when the kid is not in the keys (at most once a minute); a second round on
    /// `unknownKey` covers a set that changed between the decision and the check.
    private func withKeys<Checked>(
        _ provider: IdentityProvider, for token: JSONWebToken.Unverified, now: Int64,
        _ check: (JSONWebKeySet) throws(ProviderTokenRefusal) -> Checked
    ) throws(ProviderCheckError) -> Checked {
        let state = try state(of: provider)
        for round in 0..<2 {
            let keys = try keySet(provider, state: state, keyID: token.keyID, algorithm: token.algorithm, now: now)
            do {
                return try check(keys)
            } catch .unknownKey where round == 0 {
                continue
            } catch {
                throw .refused(error)
            }
        }
        throw .refused(.unknownKey)
    }

    private func state(of provider: IdentityProvider) throws(ProviderCheckError) -> ProviderState {
        guard let state = states[provider.id] else { throw .unavailable("\(provider.id) is not configured") }
        return state
    }

    /// The keys to check a token naming `keyID` with: the cached set, or a fetched one when the
    /// cache says so. The fetch runs under the provider's own fetch lock (never the cache's), so
    /// a slow provider holds up only its own tokens; whoever waited on it decides again, and
    /// finds the keys just fetched. A failed fetch keeps the stale keys, if any.
    private func keySet(
        _ provider: IdentityProvider, state: ProviderState, keyID: String, algorithm: JSONWebToken.Algorithm, now: Int64
    ) throws(ProviderCheckError) -> JSONWebKeySet {
        func decide() throws(ProviderCheckError) -> JSONWebKeySet? {
            switch state.keys.withLock({ $0.decision(keyID: keyID, algorithm: algorithm, now: now) }) {
            case .use(let keys): return keys
            case .fetch: return nil
            case .unavailable: throw .unavailable("\(provider.id): its keys could not be fetched; the next try is within a minute")
            }
        }
        if let keys = try decide() { return keys }
        return try state.keyFetch.withLock { _ throws(ProviderCheckError) -> JSONWebKeySet in
            if let keys = try decide() { return keys }
            do throws(ProviderCheckError) {
                let (keys, cacheControl) = try fetchKeys(provider, state: state, now: now)
                state.keys.withLock { $0.store(keys, cacheControl: cacheControl, now: now) }
                return keys
            } catch {
                let stale = state.keys.withLock { cache in
                    cache.fetchFailed(now: now)
                    return cache.keys
                }
                if let stale { return stale }
                throw error
            }
        }
    }

    /// GETs the provider's JWKS: its `jwksUri`, else its discovery document's `jwks_uri`.
    private func fetchKeys(_ provider: IdentityProvider, state: ProviderState, now: Int64) throws(ProviderCheckError)
        -> (JSONWebKeySet, String?)
    {
        let url: String
        if let configured = provider.jwksURI { url = configured } else { url = try discovery(provider, state: state, now: now).jwksURI }
        let response = try get(url, provider: provider, what: "keys")
        guard let keys = try? JSONWebKeySet(json: Data(response.body)) else {
            throw .unavailable("\(provider.id): its keys at \(ProviderURL.authority(of: url)) are not a JWKS")
        }
        return (keys, response.cacheControl)
    }

    /// The provider's discovery document, from the cache for a day, else fetched (under the
    /// provider's discovery lock, which the key fetch may take inside its own: never the reverse).
    private func discovery(_ provider: IdentityProvider, state: ProviderState, now: Int64) throws(ProviderCheckError) -> ProviderDiscovery {
        func decide() throws(ProviderCheckError) -> ProviderDiscovery? {
            switch state.discovery.withLock({ $0.decision(now: now) }) {
            case .use(let document): return document
            case .fetch: return nil
            case .unavailable: throw .unavailable("\(provider.id): its discovery document could not be had; the next try is within a minute")
            }
        }
        if let document = try decide() { return document }
        return try state.discoveryFetch.withLock { _ throws(ProviderCheckError) -> ProviderDiscovery in
            if let document = try decide() { return document }
            do throws(ProviderCheckError) {
                guard let issuer = provider.issuers.first else { throw ProviderCheckError.unavailable("\(provider.id): no issuer") }
                let response = try get(ProviderDiscovery.url(issuer: issuer), provider: provider, what: "discovery document")
                let document: ProviderDiscovery
                do throws(ProviderDiscoveryRefusal) { document = try ProviderDiscovery.parse(response.body, issuer: issuer) } catch {
                    throw ProviderCheckError.unavailable("\(provider.id): \(error.reason)")
                }
                state.discovery.withLock { $0.store(document, now: now) }
                return document
            } catch {
                let stale = state.discovery.withLock { cache in
                    cache.fetchFailed(now: now)
                    return cache.document
                }
                if let stale { return stale }
                throw error
            }
        }
    }

    /// The web flow's endpoints: Apple's and Google's own unless their `issuer` was overridden
    /// (a test provider), else the discovery document's.
    private func endpoints(of provider: IdentityProvider) throws(ProviderCheckError) -> (authorization: String, token: String) {
        switch provider.kind {
        case .apple where provider.issuers == [IdentityProvider.appleIssuer]:
            return (Self.appleAuthorizationEndpoint, Self.appleTokenEndpoint)
        case .google where provider.issuers == IdentityProvider.googleIssuers:
            return (Self.googleAuthorizationEndpoint, Self.googleTokenEndpoint)
        default:
            let document = try discovery(provider, state: state(of: provider), now: clock.unixSeconds())
            guard let authorization = document.authorizationEndpoint, let token = document.tokenEndpoint else {
                throw .unavailable("\(provider.id): its discovery document names no authorization_endpoint or token_endpoint")
            }
            return (authorization, token)
        }
    }

    /// GETs `url`: a 200 with a body of at most ``ProviderHTTPResponse/bodyLimit`` bytes.
    private func get(_ url: String, provider: IdentityProvider, what: String) throws(ProviderCheckError) -> ProviderHTTPResponse {
        let place = "\(provider.id): its \(what) at \(ProviderURL.authority(of: url))"
        let response: ProviderHTTPResponse
        do { response = try http.get(url) } catch { throw .unavailable("\(place): \(error.description)") }
        guard response.status == 200 else { throw .unavailable("\(place) answered HTTP \(response.status)") }
        guard response.body.count <= ProviderHTTPResponse.bodyLimit else {
            throw .unavailable("\(place) is over \(ProviderHTTPResponse.bodyLimit / 1024) KiB")
        }
        return response
    }
}

/// One provider's caches and the locks its fetches run under.
private final class ProviderState: Sendable {
    let keys = Mutex(ProviderKeyCache())
    let discovery = Mutex(ProviderDiscoveryCache())
    /// Held while this provider's keys are fetched, so that one fetch runs at a time and others
    /// wait for its result rather than fetch again.
    let keyFetch = Mutex(())
    /// Held while this provider's discovery document is fetched.
    let discoveryFetch = Mutex(())
}

/// The HTTP of a registry without providers: never asked.
private struct NoProviderHTTP: ProviderHTTP {
    func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse { throw ProviderHTTPError("no identity providers are configured") }
    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    { throw ProviderHTTPError("no identity providers are configured") }
}
