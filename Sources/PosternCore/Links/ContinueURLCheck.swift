/// Checks a link's `continueUrl` against the allowed hosts before anyone is sent there.
enum ContinueURLCheck {
    /// The `continueUrl` as a string when it is an absolute http(s) URL whose host is exactly an
    /// allowed host (or the public URL's own); nil otherwise.
    ///
    /// Refused: relative and protocol-relative (`//evil.test`) URLs, user-info (`app.example.com@evil.test`),
    /// backslashes (`https:\\evil.test`), whitespace and control characters (browsers strip some of
    /// them, which changes the host), invalid UTF-8, and plain http while the service uses https
    /// except to a loopback host during development.
    static func allowedURL(_ bytes: [UInt8], policy: LinkPolicy) -> String? {
        guard bytes.count <= 8192 else { return nil }
        for byte in bytes where byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") {
            return nil
        }
        guard let url = LinkURL(bytes), url.isCleanWebURL else { return nil }
        guard policy.continueHostRules.contains(where: { $0.matches(url) }) else { return nil }
        if url.scheme == .http, policy.isSecure, !isLoopback(url.host) {
            return nil
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func isLoopback(_ host: [UInt8]) -> Bool {
        LinkBytes.equals(host, 0..<host.count, "localhost") || LinkBytes.equals(host, 0..<host.count, "127.0.0.1")
            || LinkBytes.equals(host, 0..<host.count, "[::1]")
    }
}

extension LinkPolicy {
    /// `text` when it may be used as a `continueUrl`: the one rule for links in mail and for the
    /// `continueUrl` a request asks for (see `ContinueURLCheck`); nil otherwise.
    public func allowedContinueURL(_ text: String) -> String? {
        ContinueURLCheck.allowedURL(Array(text.utf8), policy: self)
    }
}
