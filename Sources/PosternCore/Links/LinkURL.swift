/// The parts of an absolute URL that the link checks need, found in one pass over its bytes.
///
/// This is deliberately smaller than a full URL parser: it splits `scheme://authority/path?query`,
/// lower-cases the host and records the tricks that make browsers and people disagree about which
/// site a URL opens (a user-info part, a backslash in the authority). Anything it cannot split
/// cleanly is reported, never guessed.
package struct LinkURL {
    /// The URL's scheme, as far as the checks care.
    enum Scheme: Equatable {
        case http
        case https
        case other
    }

    /// The whole URL.
    let bytes: [UInt8]
    let scheme: Scheme
    /// Whether the URL has `scheme://` (an authority); `javascript:` and `mailto:` do not.
    let hasAuthority: Bool
    /// A `user@` or `user:password@` part before the host.
    let hasUserInfo: Bool
    /// A backslash in the authority, which browsers read as a path separator.
    let hasBackslash: Bool
    /// Whether host and port are well formed.
    let hostIsValid: Bool
    /// The host, lower-cased, IPv6 literals with their brackets.
    let host: [UInt8]
    /// The port, or the scheme's default (80, 443) when there is none.
    let port: Int
    /// Index of the first byte of the path (it may be empty).
    let pathStart: Int
    /// The path, without query and fragment.
    let path: Range<Int>
    /// The query without its `?`, when there is one, up to the end of the URL: a fragment is
    /// still attached, and ``QueryParameters`` stops at its `#`.
    let query: Range<Int>?

    /// Splits `bytes`; returns nil when they do not start with a scheme followed by `:`.
    package init?(_ bytes: [UInt8]) {
        self.bytes = bytes
        let count = bytes.count
        var index = 0
        while index < count, Self.isSchemeByte(bytes[index], first: index == 0) {
            index += 1
        }
        guard index > 0, index < count, bytes[index] == UInt8(ascii: ":") else { return nil }
        let schemeEnd = index
        if LinkBytes.equalsIgnoringCase(bytes, 0..<schemeEnd, "https") {
            scheme = .https
        } else if LinkBytes.equalsIgnoringCase(bytes, 0..<schemeEnd, "http") {
            scheme = .http
        } else {
            scheme = .other
        }
        index = schemeEnd + 1
        let defaultPort = scheme == .http ? 80 : 443
        guard index + 1 < count, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "/") else {
            hasAuthority = false
            hasUserInfo = false
            hasBackslash = false
            hostIsValid = false
            host = []
            port = defaultPort
            pathStart = index
            let split = Self.splitPathAndQuery(bytes, from: index)
            path = split.path
            query = split.query
            return
        }
        hasAuthority = true
        let authorityStart = index + 2
        var authorityEnd = authorityStart
        var sawBackslash = false
        var lastAt = -1
        while authorityEnd < count {
            let byte = bytes[authorityEnd]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                break
            }
            if byte == UInt8(ascii: "\\") {
                sawBackslash = true
            } else if byte == UInt8(ascii: "@") {
                lastAt = authorityEnd
            }
            authorityEnd += 1
        }
        hasBackslash = sawBackslash
        hasUserInfo = lastAt >= 0
        let hostStart = lastAt >= 0 ? lastAt + 1 : authorityStart
        let parsedHost = Self.parseHostAndPort(bytes, hostStart..<authorityEnd, defaultPort: defaultPort)
        hostIsValid = parsedHost.valid && !sawBackslash
        host = parsedHost.host
        port = parsedHost.port
        pathStart = authorityEnd
        let split = Self.splitPathAndQuery(bytes, from: authorityEnd)
        path = split.path
        query = split.query
    }

    /// Whether the URL is http(s) with a clean, valid authority: no user-info, no backslash.
    var isCleanWebURL: Bool {
        scheme != .other && hasAuthority && hostIsValid && !hasUserInfo && !hasBackslash
    }

    /// Whether the host equals `name` (which must be lower case).
    func hostEquals(_ name: StaticString) -> Bool {
        LinkBytes.equals(host, 0..<host.count, name)
    }

    /// Whether the host ends with `suffix` (lower case, starting with a dot) and has a label before it.
    func hostHasSuffix(_ suffix: StaticString) -> Bool {
        let length = suffix.utf8CodeUnitCount
        guard host.count > length else { return false }
        return LinkBytes.equals(host, (host.count - length)..<host.count, suffix)
    }

    /// Whether the path equals `name` exactly.
    func pathEquals(_ name: StaticString) -> Bool {
        LinkBytes.equals(bytes, path, name)
    }

    private static func isSchemeByte(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
            !first
        default:
            false
        }
    }

    private static func splitPathAndQuery(_ bytes: [UInt8], from start: Int) -> (path: Range<Int>, query: Range<Int>?) {
        bytes.withUnsafeBufferPointer { buffer in
            var index = start
            let count = buffer.count
            while index < count, buffer[index] != UInt8(ascii: "?"), buffer[index] != UInt8(ascii: "#") {
                index += 1
            }
            let path = start..<index
            guard index < count, buffer[index] == UInt8(ascii: "?") else { return (path, nil) }
            // The query runs to the end; its readers stop at `#`, which saves a pass over it.
            return (path, (index + 1)..<count)
        }
    }

    private static func parseHostAndPort(
        _ bytes: [UInt8], _ range: Range<Int>, defaultPort: Int
    ) -> (valid: Bool, host: [UInt8], port: Int) {
        guard !range.isEmpty else { return (false, [], defaultPort) }
        var hostEnd = range.lowerBound
        var valid = true
        if bytes[range.lowerBound] == UInt8(ascii: "[") {
            while hostEnd < range.upperBound, bytes[hostEnd] != UInt8(ascii: "]") {
                let byte = bytes[hostEnd]
                if hostEnd > range.lowerBound, !(LinkBytes.isHexDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")) {
                    valid = false
                }
                hostEnd += 1
            }
            guard hostEnd < range.upperBound else { return (false, [], defaultPort) }
            hostEnd += 1
        } else {
            while hostEnd < range.upperBound, bytes[hostEnd] != UInt8(ascii: ":") {
                if !isRegisteredNameByte(bytes[hostEnd]) {
                    valid = false
                }
                hostEnd += 1
            }
        }
        if hostEnd == range.lowerBound {
            valid = false
        }
        var host = [UInt8]()
        host.reserveCapacity(hostEnd - range.lowerBound)
        for index in range.lowerBound..<hostEnd {
            host.append(LinkBytes.lowercased(bytes[index]))
        }
        var port = defaultPort
        if hostEnd < range.upperBound {
            // bytes[hostEnd] is ":"; an empty port means the default (RFC 3986 section 3.2.3).
            let digits = (hostEnd + 1)..<range.upperBound
            if !digits.isEmpty {
                var value = 0
                for index in digits {
                    let byte = bytes[index]
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value <= 65_535 else {
                        return (false, host, defaultPort)
                    }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                guard value <= 65_535 else { return (false, host, defaultPort) }
                port = value
            }
        }
        return (valid, host, port)
    }

    private static func isRegisteredNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
