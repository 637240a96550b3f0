import PosternCore

/// The hooks' calls over libcurl (``CurlHTTPPoster``): https with certificates checked (the
/// system's CAs and `--provider-ca-file`'s), or http to the loopback host the settings allowed
/// (``HookConfiguration/checkURL(_:)``); no redirect followed, no proxy; the whole transfer,
/// connecting included, within `--hook-timeout` milliseconds; an answer over
/// ``HookAnswer``'s 16 KiB fails the transfer.
///
/// Every call makes its own easy handle, so the client may be used from any request thread.
public final class CurlHookHTTP: HookHTTP {
    /// The longest answer taken (the same as Core's limit for reading it).
    static let bodyLimit = 16 * 1024

    private let caFile: String?
    private let timeoutMilliseconds: Int64

    /// A client whose calls each take at most `timeoutMilliseconds`, trusting the system's CAs and
    /// those of `caFile` (PEM) when given.
    public init(timeoutMilliseconds: Int64, caFile: String?) {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
    }

    public func post(_ url: String, headers: WebhookSignedHeaders, body: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        // Hosts the hook is at are the operator's own: no address policy, as for identity providers.
        let poster = CurlHTTPPoster(
            timeout: 1, caFile: caFile, targets: nil, longestBody: Self.bodyLimit, timeoutMilliseconds: timeoutMilliseconds)
        let answer = poster.post(
            url: url, headers: ["Content-Type: application/json", "Accept: application/json", "User-Agent: Postern-Hooks"] + headers.lines,
            body: body)
        if let failure = answer.failure { throw ProviderHTTPError(failure) }
        return ProviderHTTPResponse(status: answer.status, body: answer.body, cacheControl: nil)
    }
}
