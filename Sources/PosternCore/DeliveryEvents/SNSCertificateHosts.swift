/// The hosts Amazon SNS's signing certificates (`SigningCertURL`) and subscription confirmations
/// (`SubscribeURL`) may be fetched from (`--sns-certificate-hosts`). A pattern is a host name whose
/// labels match one for one; a `*` label matches any one label of letters, digits and hyphens.
/// The default, `sns.*.amazonaws.com`, is SNS in every commercial region and nothing else:
/// `sns.us-east-1.amazonaws.com.evil.com` has more labels, `evil.com/sns.us-east-1.amazonaws.com`
/// another host. A URL with a port matches only a pattern that names that port
/// (`localhost:8443`, for a test), so the default takes none.
public struct SNSCertificateHosts: Sendable, Equatable, CustomStringConvertible {
    /// One allowed host: its labels (lower-cased, `*` for any one label) and its port, if any.
    struct Pattern: Sendable, Equatable {
        var labels: [String]
        var port: String?
    }

    let patterns: [Pattern]

    /// The real SNS: `sns.<region>.amazonaws.com`.
    public static let amazon = SNSCertificateHosts(patterns: [Pattern(labels: ["sns", "*", "amazonaws", "com"], port: nil)])

    private init(patterns: [Pattern]) { self.patterns = patterns }

    /// The comma-separated patterns of `text` (`sns.*.amazonaws.com,sns.*.amazonaws.com.cn`).
    /// - Throws: `SettingsError` for an empty list or a pattern that is not a host name.
    public init(parsing text: String) throws(SettingsError) {
        var patterns: [Pattern] = []
        for item in text.split(separator: ",") {
            let trimmed = item.trimmingCharacters(in: .whitespaces).lowercased()
            if trimmed.isEmpty { continue }
            guard let pattern = Self.split(trimmed, wildcards: true) else {
                throw SettingsError("\(trimmed.debugDescription) is not a host name, a host with * for one label, or either with :PORT")
            }
            patterns.append(pattern)
        }
        guard !patterns.isEmpty else { throw SettingsError("must name at least one host pattern, such as sns.*.amazonaws.com") }
        self.patterns = patterns
    }

    /// Whether `url` is one to fetch from: `https://` on an allowed host, with no user
    /// information, no port but a pattern's, no fragment, no backslash or percent sign, and — for
    /// a signing certificate (`certificate`) — a path ending `.pem` and no query.
    public func allows(_ url: String, certificate: Bool) -> Bool {
        guard url.utf8.count <= 2048, url.hasPrefix("https://"),
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return false }
        let rest = url.dropFirst("https://".count)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        let authority = rest[..<slash]
        let pathAndQuery = rest[slash...]
        guard !authority.contains(where: { "@\\?#%[]".contains($0) }), !pathAndQuery.contains(where: { "#\\".contains($0) }),
            let host = Self.split(authority.lowercased(), wildcards: false)
        else { return false }
        if certificate {
            guard !pathAndQuery.contains("?"), !pathAndQuery.contains("%"), pathAndQuery.hasSuffix(".pem") else { return false }
        }
        return patterns.contains { pattern in
            pattern.port == host.port && pattern.labels.count == host.labels.count
                && zip(pattern.labels, host.labels).allSatisfy { $0 == "*" || $0 == $1 }
        }
    }

    /// `host[:port]` as labels and a port; nil when a label is empty or holds anything but
    /// letters, digits and hyphens (or is `*`, when `wildcards`), or the port is not 1 to 65535.
    private static func split(_ text: String, wildcards: Bool) -> Pattern? {
        var hostText = Substring(text)
        var port: String?
        if let colon = text.firstIndex(of: ":") {
            let digits = text[text.index(after: colon)...]
            guard let number = Int(digits), (1...65_535).contains(number), String(number) == digits else { return nil }
            port = String(digits)
            hostText = text[..<colon]
        }
        let labels = hostText.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 1, labels.count <= 16 else { return nil }
        for label in labels {
            if wildcards && label == "*" { continue }
            guard !label.isEmpty, label.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
            else { return nil }
        }
        // A pattern of wildcards alone would allow any host.
        if wildcards && labels.allSatisfy({ $0 == "*" }) { return nil }
        return Pattern(labels: labels, port: port)
    }

    public var description: String {
        patterns.map { $0.labels.joined(separator: ".") + ($0.port.map { ":\($0)" } ?? "") }.joined(separator: ",")
    }
}
