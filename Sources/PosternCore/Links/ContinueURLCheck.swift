/// Checks a link's `continueUrl` against the allowed hosts before anyone is sent there.
package enum ContinueURLCheck {
    /// The `continueUrl` as a string when it is an absolute http(s) URL whose host is exactly an
    /// allowed host (or the public URL's own); nil otherwise.
    ///
    /// Refused: relative and protocol-relative (`//evil.test`) URLs, user-info (`app.example.com@evil.test`),
    /// backslashes (`https:\\evil.test`), whitespace and control characters (browsers strip some of
    /// them, which changes the host), invalid UTF-8, and plain http while the service uses https
    /// except to a loopback host during development.
    package static func allowedURL(_ bytes: [UInt8], policy: LinkPolicy) -> String? {
        guard bytes.count <= 8192 else { return nil }
        for byte in bytes where byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") {
            return nil
        }
        guard let url = LinkURL(bytes), url.isCleanWebURL else { return nil }
        guard policy.continueHostRules.contains(where: { $0.matchesOrigin(url) }) else { return nil }
        guard !carriesActionParameters(url) else { return nil }
        if url.scheme == .http, policy.isSecure, !isLoopback(url.host) {
            return nil
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The parameters the hosted page appends to a `continueUrl`; one that is already there would
    /// come first (`…&oobCode=EVIL&…&oobCode=REAL`), and an app reading the first value would
    /// sign its user into the attacker's account.
    /// Lower case: compared ignoring case.
    static let actionParameters: [StaticString] = ["mode", "oobcode", "apikey", "lang"]

    /// Whether the query or the fragment names one of `actionParameters` (compared after
    /// percent-decoding and ignoring case, so `OOBCODE` and `oob%43ode` count too).
    static func carriesActionParameters(_ url: LinkURL) -> Bool {
        let bytes = url.bytes
        var found = false
        func check(_ range: Range<Int>) {
            QueryParameters.forEachPair(in: bytes, query: range) { key, _ in
                let name = PercentDecoding.needsDecoding(bytes, key) ? PercentDecoding.decode(bytes, key) : Array(bytes[key])
                if actionParameters.contains(where: { LinkBytes.equalsIgnoringCase(name, 0..<name.count, $0) }) {
                    found = true
                }
            }
        }
        if let query = url.query { check(query) }
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { check((hash + 1)..<bytes.count) }
        return found
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

extension LinkPolicy {
    /// An ECMA-262 pattern of continue URLs this policy allows: an allowed origin (the public
    /// URL's, each allowed host's with its port or the scheme's default), then a path of
    /// unreserved characters; or nothing. Every URL it matches passes `allowedContinueURL`; the check allows
    /// more (queries, fragments, percent-escapes), so the pattern is what a client can rely on.
    public var continueURLPattern: String {
        var origins: [String] = []
        for rule in continueHostRules {
            let host = String(decoding: rule.host, as: UTF8.self)
            for scheme in ["https", "http"] {
                if scheme == "http", isSecure, !ContinueURLCheck.isLoopback(rule.host) { continue }
                let defaultPort = scheme == "http" ? 80 : 443
                let port = rule.port ?? defaultPort
                let portPattern = port == defaultPort ? "(?::\(port))?" : ":\(port)"
                let origin = "\(scheme)://\(Self.regexEscaped(host))\(portPattern)"
                if !origins.contains(origin) { origins.append(origin) }
            }
        }
        // Or empty: a request's empty continueUrl means none.
        return "^(?:(?:" + origins.joined(separator: "|") + ")(?:/[A-Za-z0-9_~-]*)*)?$"
    }

    private static func regexEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
