/// What a provider's server answered.
public struct ProviderHTTPResponse: Sendable {
    /// The HTTP status.
    public let status: Int
    /// The body.
    public let body: [UInt8]
    /// The `Cache-Control` header, if any (a JWKS's lifetime).
    public let cacheControl: String?

    public init(status: Int, body: [UInt8], cacheControl: String?) {
        self.status = status
        self.body = body
        self.cacheControl = cacheControl
    }
}

/// Why a provider's server could not be asked: the connection, TLS, a timeout. Names the URL's
/// host at most, never a secret.
public struct ProviderHTTPError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// The requests Postern makes to identity providers: keys, discovery documents, the web flow's
/// code redemption. https only, certificates always checked (`--provider-ca-file` adds CAs).
/// PosternMail's libcurl client in the daemon; a table in Core's unit tests.
public protocol ProviderHTTP: Sendable {
    /// GETs `url`.
    func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse
    /// POSTs `fields` form-encoded to `url`, with HTTP Basic authentication when `basic` is given.
    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
}

extension ProviderHTTPResponse {
    /// The largest body Postern takes from a provider (a JWKS, a discovery document, a token
    /// answer are a few KiB): a longer one is refused, not cut.
    public static let bodyLimit = 256 * 1024
}
