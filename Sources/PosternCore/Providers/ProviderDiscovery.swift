import Foundation

/// What an OpenID provider's discovery document (`{issuer}/.well-known/openid-configuration`,
/// OpenID Connect Discovery 1.0 §4) tells Postern: where its keys are and, for the web flow,
/// its authorization and token endpoints. Every URL is https.
struct ProviderDiscovery: Sendable, Hashable {
    /// `jwks_uri`.
    let jwksURI: String
    /// `authorization_endpoint`; nil when the document has none (then no web flow).
    let authorizationEndpoint: String?
    /// `token_endpoint`; nil when the document has none (then no web flow).
    let tokenEndpoint: String?

    /// Where the document of `issuer` is: the issuer without a trailing `/`, then the well-known path.
    static func url(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Reads a document that must name exactly `issuer` (Discovery §4.3: else anyone who can
    /// serve a document could speak for the issuer).
    /// - Throws: a sentence for ``ProviderCheckError/unavailable(_:)``: not JSON, another issuer,
    ///   no `jwks_uri`, or a URL that is not https.
    static func parse(_ body: [UInt8], issuer: String) throws(ProviderDiscoveryRefusal) -> ProviderDiscovery {
        guard let document = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw ProviderDiscoveryRefusal("its discovery document is not a JSON object")
        }
        guard document["issuer"] as? String == issuer else {
            throw ProviderDiscoveryRefusal("its discovery document names another issuer than the configured one")
        }
        func url(_ field: String) throws(ProviderDiscoveryRefusal) -> String? {
            guard let value = document[field] else { return nil }
            guard let text = value as? String, isHTTPS(text) else {
                throw ProviderDiscoveryRefusal("its discovery document's \(field) is not an https URL")
            }
            return text
        }
        guard let jwksURI = try url("jwks_uri") else { throw ProviderDiscoveryRefusal("its discovery document has no jwks_uri") }
        return ProviderDiscovery(jwksURI: jwksURI, authorizationEndpoint: try url("authorization_endpoint"), tokenEndpoint: try url("token_endpoint"))
    }

    /// An https URL with a host, without credentials or fragment: the rule of the providers file's URLs.
    static func isHTTPS(_ url: String) -> Bool {
        url.hasPrefix("https://") && !ProviderURL.authority(of: url).isEmpty && !ProviderURL.carriesCredentials(url) && !url.contains("#")
            && !url.contains(where: { $0.isWhitespace })
    }
}

/// Why a discovery document cannot be used: a sentence naming no secret.
struct ProviderDiscoveryRefusal: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The cache rules of one provider's discovery document, as ``ProviderKeyCache`` has them for
/// keys: a document is used for a day, then fetched again; a failed fetch keeps the old one and
/// is not tried again within ``ProviderKeyCache/refetchInterval``.
struct ProviderDiscoveryCache: Sendable {
    /// How long a fetched document is used before it is fetched again, in seconds.
    static let lifetime: Int64 = 86_400

    enum Decision: Sendable {
        case use(ProviderDiscovery)
        case fetch
        case unavailable
    }

    private(set) var document: ProviderDiscovery?
    private var freshUntil: Int64 = .min
    private var lastFetchAt: Int64?

    func decision(now: Int64) -> Decision {
        let mayFetch = lastFetchAt.map { now - $0 >= ProviderKeyCache.refetchInterval } ?? true
        guard let document else { return mayFetch ? .fetch : .unavailable }
        if now >= freshUntil, mayFetch { return .fetch }
        return .use(document)
    }

    mutating func store(_ document: ProviderDiscovery, now: Int64) {
        self.document = document
        lastFetchAt = now
        freshUntil = now + Self.lifetime
    }

    mutating func fetchFailed(now: Int64) { lastFetchAt = now }
}
