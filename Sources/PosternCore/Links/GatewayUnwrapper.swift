/// Recognises a mail security gateway's rewrite of a link and recovers the link it wraps, one level
/// at a time, offline.
package enum GatewayUnwrapper {
    /// What one unwrapping step found.
    package enum Step {
        /// The URL is not a known gateway's rewrite.
        case notAGateway
        /// The URL wrapped by the gateway.
        case unwrapped([UInt8])
        /// A gateway whose rewrite only its own servers can resolve (Mimecast).
        case offline
        /// A known gateway's rewrite that is missing its target or cannot be decoded.
        case damaged
    }

    /// Unwraps one level of `url` when it is a Microsoft Safe Links, Proofpoint URL Defense
    /// (v1, v2, v3), Google redirector or Barracuda Link Protection rewrite; reports Mimecast.
    package static func unwrap(_ url: LinkURL) -> Step {
        guard url.isCleanWebURL else { return .notAGateway }
        if url.hostHasSuffix(".safelinks.protection.outlook.com") || url.hostHasSuffix(".safelinks.protection.office365.us") {
            return parameter("url", of: url)
        }
        if url.hostEquals("urldefense.proofpoint.com") || url.hostEquals("urldefense.com") {
            return proofpoint(url)
        }
        if url.hostEquals("www.google.com") || url.hostEquals("google.com") {
            guard url.pathEquals("/url") else { return .notAGateway }
            if case .unwrapped(let target) = parameter("q", of: url) {
                return .unwrapped(target)
            }
            return parameter("url", of: url)
        }
        if url.hostEquals("linkprotect.cudasvc.com") {
            guard url.pathEquals("/url") else { return .notAGateway }
            return parameter("a", of: url)
        }
        if isMimecast(url) {
            return .offline
        }
        return .notAGateway
    }

    private static func proofpoint(_ url: LinkURL) -> Step {
        let bytes = url.bytes
        if LinkBytes.hasPrefix(bytes, at: url.pathStart, "/v3/__") {
            guard let target = ProofpointV3Decoder.decode(bytes, from: url.pathStart + 6) else { return .damaged }
            return .unwrapped(target)
        }
        if url.pathEquals("/v1/url") {
            return parameter("u", of: url)
        }
        if url.pathEquals("/v2/url") {
            guard case .unwrapped(var target) = parameter("u", of: url) else { return .damaged }
            // v2 writes the percent-encoded URL with `-` for `%` and `_` for `/`.
            for index in target.indices {
                if target[index] == UInt8(ascii: "-") {
                    target[index] = UInt8(ascii: "%")
                } else if target[index] == UInt8(ascii: "_") {
                    target[index] = UInt8(ascii: "/")
                }
            }
            return .unwrapped(PercentDecoding.decode(target, 0..<target.count))
        }
        return .damaged
    }

    /// The percent-decoded value of the query parameter `name`: the wrapped URL.
    private static func parameter(_ name: StaticString, of url: LinkURL) -> Step {
        guard let query = url.query else { return .damaged }
        switch QueryParameters.lookup(name, in: url.bytes, query: query) {
        case .absent, .conflicting:
            return .damaged
        case .value(let range):
            guard !range.isEmpty else { return .damaged }
            return .unwrapped(PercentDecoding.decode(url.bytes, range))
        }
    }

    /// `protect-*.mimecast.com/s/…` and the newer `*.mimecastprotect.com/s/…`.
    private static func isMimecast(_ url: LinkURL) -> Bool {
        if url.hostHasSuffix(".mimecastprotect.com") {
            return true
        }
        guard url.hostHasSuffix(".mimecast.com") else { return false }
        return LinkBytes.hasPrefix(url.host, at: 0, "protect")
    }
}
