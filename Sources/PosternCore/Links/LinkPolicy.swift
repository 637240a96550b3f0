/// Which links the parser accepts: the origin of the service's public URL, and the app hosts that
/// may carry action links and be a `continueUrl`'s target.
public struct LinkPolicy: Sendable, Equatable {
    /// One allowed host, with the port it is pinned to (nil: not pinned).
    struct HostRule: Sendable, Equatable {
        let host: [UInt8]
        let port: Int?

        /// For an app link: a bare host allows any port.
        func matches(_ url: LinkURL) -> Bool {
            url.host == host && (port == nil || port == url.port)
        }

        /// For a `continueUrl`, which receives live codes: the exact origin. A bare host means
        /// the scheme's default port, so another service on another port of an allowed host
        /// (which the hosted page's Continue button would hand the code to) is refused.
        func matchesOrigin(_ url: LinkURL) -> Bool {
            url.host == host && url.port == (port ?? (url.scheme == .http ? 80 : 443))
        }
    }

    /// `http` or `https`, from the public URL.
    public let scheme: String
    /// The public URL's host, lower-cased.
    public let host: String
    /// The public URL's port, or the scheme's default.
    public let port: Int
    /// The allowed app hosts, lower-cased, as given (`host` or `host:port`).
    public let allowedHosts: [String]

    let isSecure: Bool
    let hostBytes: [UInt8]
    /// The allowed hosts; an action link on one of them is an app link.
    let appHostRules: [HostRule]
    /// The allowed hosts plus the public URL's own origin: where a `continueUrl` may point.
    let continueHostRules: [HostRule]

    /// Reads the public URL and allowed hosts from the settings.
    ///
    /// Throws ``LinkPolicyError/invalidPublicURL`` when `publicURL` is not an absolute http(s) URL
    /// with a host and without user-info, and ``LinkPolicyError/invalidAllowedHost`` for an entry of
    /// `allowedHosts` that is not a bare `host` or `host:port`.
    public init(publicURL: String, allowedHosts: [String]) throws(LinkPolicyError) {
        let trimmed = LinkBytes.trimmingWhitespace(Array(publicURL.utf8))
        guard let url = LinkURL(trimmed), url.isCleanWebURL else { throw .invalidPublicURL }
        isSecure = url.scheme == .https
        scheme = isSecure ? "https" : "http"
        hostBytes = url.host
        host = String(decoding: url.host, as: UTF8.self)
        port = url.port

        var names = [String]()
        var rules = [HostRule]()
        for entry in allowedHosts {
            let bytes = LinkBytes.trimmingWhitespace(Array(entry.utf8))
            // Parsed as the authority of a URL so that the same rules apply as for links.
            guard !bytes.isEmpty,
                  !bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
                  let parsed = LinkURL(Array("https://".utf8) + bytes), parsed.isCleanWebURL
            else { throw .invalidAllowedHost }
            // `host:port` pins the port; a bare host (or `host:`) allows any port.
            let hasPort = bytes.count > parsed.host.count + 1
            rules.append(HostRule(host: parsed.host, port: hasPort ? parsed.port : nil))
            names.append(String(decoding: bytes.map(LinkBytes.lowercased), as: UTF8.self))
        }
        self.allowedHosts = names
        appHostRules = rules
        continueHostRules = rules + [HostRule(host: url.host, port: url.port)]
    }

    /// Whether `url` has the public URL's origin: same scheme, host and port.
    func isPublicOrigin(_ url: LinkURL) -> Bool {
        url.scheme == (isSecure ? .https : .http) && url.host == hostBytes && url.port == port
    }
}
