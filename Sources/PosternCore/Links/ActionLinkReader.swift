/// Turns one candidate URL into an action link: unwraps gateway rewrites (at most
/// ``PastedLinkParser/maximumWrapperDepth`` of them), then checks origin, mode, code and
/// `continueUrl`.
enum ActionLinkReader {
    /// What one candidate amounts to.
    enum Verdict {
        /// Not an action link at all (a news link in a pasted mail): ignore it.
        case irrelevant
        /// An action link, or a rewrite of one, that must not be used, and why.
        case refused(LinkRefusal)
        /// A valid action link.
        case accepted(ActionLink)
    }

    /// Reads the candidate `bytes` under `policy`.
    static func read(_ bytes: [UInt8], policy: LinkPolicy) -> Verdict {
        var current = bytes
        var depth = 0
        while true {
            guard let url = LinkURL(current) else { return .irrelevant }
            switch GatewayUnwrapper.unwrap(url) {
            case .unwrapped(let inner):
                depth += 1
                guard depth <= PastedLinkParser.maximumWrapperDepth else { return .refused(.tooDeep) }
                current = LinkBytes.trimmingWhitespace(inner)
            case .offline:
                return .refused(.gatewayOffline)
            case .damaged:
                return .refused(.damagedWrapper)
            case .notAGateway:
                return classify(url, policy: policy)
            }
        }
    }

    private static func classify(_ url: LinkURL, policy: LinkPolicy) -> Verdict {
        let bytes = url.bytes
        guard let query = url.query else { return .irrelevant }
        var mode = QueryParameters.Lookup.absent
        var code = QueryParameters.Lookup.absent
        var continueURL = QueryParameters.Lookup.absent
        var language = QueryParameters.Lookup.absent
        QueryParameters.forEachPair(in: bytes, query: query) { key, value in
            if QueryParameters.nameMatches("mode", bytes, key) {
                QueryParameters.record(value, into: &mode, bytes)
            } else if QueryParameters.nameMatches("oobCode", bytes, key) {
                QueryParameters.record(value, into: &code, bytes)
            } else if QueryParameters.nameMatches("continueUrl", bytes, key) {
                QueryParameters.record(value, into: &continueURL, bytes)
            } else if QueryParameters.nameMatches("lang", bytes, key) {
                QueryParameters.record(value, into: &language, bytes)
            }
        }
        guard mode != .absent || code != .absent else { return .irrelevant }

        if let refusal = originRefusal(url, policy: policy) {
            return .refused(refusal)
        }

        let action: EmailAction
        switch mode {
        case .absent:
            return .refused(.unknownMode)
        case .conflicting:
            return .refused(.ambiguous)
        case .value(let range):
            guard let parsed = emailAction(PercentDecoding.decode(bytes, range)) else { return .refused(.unknownMode) }
            action = parsed
        }

        let oobCode: String
        switch code {
        case .absent:
            return .refused(.missingCode)
        case .conflicting:
            return .refused(.ambiguous)
        case .value(let range):
            guard !range.isEmpty else { return .refused(.missingCode) }
            let decoded = PercentDecoding.decode(bytes, range)
            guard decoded.count <= 4096, decoded.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return .refused(.malformedCode)
            }
            oobCode = String(decoding: decoded, as: UTF8.self)
        }

        var continueUrl: String?
        switch continueURL {
        case .absent:
            break
        case .conflicting:
            return .refused(.ambiguous)
        case .value(let range):
            if !range.isEmpty {
                guard let allowed = ContinueURLCheck.allowedURL(PercentDecoding.decode(bytes, range), policy: policy) else {
                    return .refused(.continueURLNotAllowed)
                }
                continueUrl = allowed
            }
        }

        var lang: String?
        if case .value(let range) = language {
            lang = languageTag(PercentDecoding.decode(bytes, range))
        }
        return .accepted(ActionLink(mode: action, oobCode: oobCode, continueUrl: continueUrl, lang: lang))
    }

    /// Why `url` is not on the public origin or an allowed app host, or nil when it is.
    private static func originRefusal(_ url: LinkURL, policy: LinkPolicy) -> LinkRefusal? {
        guard url.scheme != .other else { return .unsafeScheme }
        if url.hasUserInfo || url.hasBackslash {
            return .deceptiveLink
        }
        guard url.hasAuthority, url.hostIsValid else { return .foreignHost }
        if policy.isPublicOrigin(url) {
            return nil
        }
        let isAppHost = policy.appHostRules.contains { $0.matches(url) }
        if url.host == policy.hostBytes || isAppHost {
            // Same host, but plain http where the service uses https: a downgrade.
            if url.scheme == .http, policy.isSecure {
                return .insecure
            }
            return isAppHost ? nil : .foreignHost
        }
        return .foreignHost
    }

    private static func emailAction(_ bytes: [UInt8]) -> EmailAction? {
        guard bytes.count <= 32 else { return nil }
        return EmailAction(rawValue: String(decoding: bytes, as: UTF8.self))
    }

    /// The tag as the link spells it (`pt-BR`) when it is a language tag in the form templates
    /// are chosen by (``MailLocale/normalized(_:)``, up to case), or nil: the tag only picks a
    /// template, so an odd one is dropped rather than refused.
    private static func languageTag(_ bytes: [UInt8]) -> String? {
        // The common bare language (`en`, `de`) skips the String work: MailLocale takes any 2 or 3
        // lower-case letters as they are.
        if bytes.count == 2 || bytes.count == 3,
           bytes.allSatisfy({ $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        guard !bytes.isEmpty, bytes.count <= 64, let tag = String(validating: bytes, as: UTF8.self),
              MailLocale.normalized(tag) == tag.lowercased()
        else { return nil }
        return tag
    }
}
