/// The POST of one hook call: PosternMail's libcurl client in the daemon (https, or http to
/// loopback; certificates checked; the whole transfer, connecting included, within
/// `--hook-timeout`; an answer over ``HookAnswer/bodyLimit`` refused), a table in Core's tests.
public protocol HookHTTP: Sendable {
    /// POSTs `body` (JSON) to `url` with the Standard Webhooks headers.
    /// - Throws: `ProviderHTTPError` when there is no answer in time (no connection, TLS, the
    ///   deadline, an answer too long): it names a host at most.
    func post(_ url: String, headers: WebhookSignedHeaders, body: String) throws(ProviderHTTPError) -> ProviderHTTPResponse
}
