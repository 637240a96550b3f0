import PosternCore

/// Identity providers' requests over libcurl (``CurlHTTPPoster``): keys, discovery documents and
/// the web flow's code redemption. https only (any other URL is refused before a connection is
/// made), certificates always checked, no redirect followed, 5 s to connect and 10 s in all, a
/// body over ``ProviderHTTPResponse/bodyLimit`` refused.
///
/// `--provider-ca-file` is given to curl as its CA file (`CURLOPT_CAINFO`), which replaces the
/// CA bundle libcurl was built with but not its CA directory (`CURLOPT_CAPATH`, which is left as
/// built: on Debian /etc/ssl/certs, the same system CAs hashed), so the system's CAs stay trusted
/// beside the file's. On a libcurl built without a CA directory, make the file a bundle: the
/// system's bundle followed by the extra CAs.
///
/// Every call makes its own easy handle, so the client may be used from any thread: providers are
/// asked rarely (their answers are cached), so a connection is not worth keeping.
public final class CurlProviderHTTP: ProviderHTTP {
    /// Seconds to connect, TLS included.
    static let connectTimeout: Int64 = 5
    /// Seconds a whole request may take.
    static let timeout: Int64 = 10

    private let caFile: String?

    /// A client trusting the system's CAs and, when given, those of `caFile` (PEM).
    public init(caFile: String?) { self.caFile = caFile }

    public func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        try Self.checkHTTPS(url)
        return try Self.response(poster().get(url: url, headers: ["Accept: application/json", "User-Agent: Postern"]))
    }

    public func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    {
        try Self.checkHTTPS(url)
        let answer = poster().post(
            url: url, headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json", "User-Agent: Postern"],
            body: TwilioSMSTransport.formEncoded(fields), credentials: basic)
        return try Self.response(answer)
    }

    private func poster() -> CurlHTTPPoster {
        CurlHTTPPoster(
            timeout: Self.timeout, caFile: caFile, targets: nil, connectTimeout: Self.connectTimeout, httpsOnly: true,
            longestBody: ProviderHTTPResponse.bodyLimit)
    }

    /// Refuses a URL that is not https before anything connects (curl is also told to speak only https).
    static func checkHTTPS(_ url: String) throws(ProviderHTTPError) {
        guard url.hasPrefix("https://") else { throw ProviderHTTPError("only https is fetched from identity providers") }
    }

    /// The answer, or curl's failure (which names a host at most, never the URL's path or query,
    /// where a code could be; the registry's message names the provider and the host).
    private static func response(_ answer: CurlHTTPAnswer) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        if let failure = answer.failure { throw ProviderHTTPError(failure) }
        return ProviderHTTPResponse(status: answer.status, body: answer.body, cacheControl: answer.cacheControl)
    }
}
