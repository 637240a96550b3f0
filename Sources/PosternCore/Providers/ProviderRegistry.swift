import Foundation
import PosternCrypto

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

    /// No providers: every provider request answers `PROVIDER_NOT_CONFIGURED`.
    public static let none = ProviderRegistry(providers: [], clientSecrets: [:], http: NoProviderHTTP())

    /// `clientSecrets`: the web flow's client secret by provider `id`, read from each
    /// `clientSecretFile` at start-up.
    public init(providers: [IdentityProvider], clientSecrets: [String: String], http: any ProviderHTTP) {
        self.providers = providers
        self.clientSecrets = clientSecrets
        self.http = http
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
        throw .unavailable("\(provider.id): keys are not fetched yet")
    }

    /// Where the hosted page sends the browser to sign in at `provider` (its discovery document's
    /// `authorization_endpoint`): `response_type=code`, `scope=openid email`, the given `state`,
    /// `nonce`, S256 `codeChallenge` and `redirectURI` (Apple: `response_mode=form_post`, its rule
    /// when the address is asked for).
    /// - Throws: `unavailable` when the provider has no `clientId` or its endpoint cannot be had.
    public func authorizationURL(
        provider: IdentityProvider, redirectURI: String, state: String, nonce: String, codeChallenge: String
    ) throws(ProviderCheckError) -> String {
        throw .unavailable("\(provider.id): the web flow is not built yet")
    }

    /// Redeems the web flow's `code` at the provider's token endpoint (client id and secret, the
    /// PKCE verifier, the same `redirectURI`) and answers the ID token it returns (unchecked: the
    /// caller runs ``verify(_:provider:nonce:now:)`` on it).
    /// - Throws: `refused(.malformed)` when the provider refuses the code or answers no ID token;
    ///   `unavailable` when it cannot be reached.
    public func redeem(code: String, codeVerifier: String, redirectURI: String, provider: IdentityProvider) throws(ProviderCheckError) -> String {
        throw .unavailable("\(provider.id): the web flow is not built yet")
    }
}

/// The HTTP of a registry without providers: never asked.
private struct NoProviderHTTP: ProviderHTTP {
    func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse { throw ProviderHTTPError("no identity providers are configured") }
    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    { throw ProviderHTTPError("no identity providers are configured") }
}
