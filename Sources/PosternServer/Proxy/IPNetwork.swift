import Foundation

/// An IPv4 or IPv6 address as its bytes. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is
/// taken as the IPv4 address it maps, so one client has one rate-limit key however a proxy wrote
/// it, and an IPv4 network matches it.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    let bytes: [UInt8]

    /// Parses a bare address as `inet_pton` reads it; also `[v6]`, `[v6]:port` and `v4:port`,
    /// the forms some proxies write into X-Forwarded-For. Nil for anything else (host names,
    /// zone ids, `1.2.3`, empty).
    public init?(_ text: String) {
        // Spaces and tabs only (the list's whitespace in a header): Foundation's trimming cost
        // a bridged string and ran on every request (3 % of a send-link's CPU under load).
        var candidate = Substring(HTTPWhitespace.trimmed(text.utf8))
        if candidate.hasPrefix("[") {
            guard let close = candidate.firstIndex(of: "]") else { return nil }
            let rest = candidate[candidate.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber) && rest.count > 1) else { return nil }
            candidate = candidate[candidate.index(after: candidate.startIndex)..<close]
        } else if let colon = candidate.firstIndex(of: ":"), colon == candidate.lastIndex(of: ":") {
            // One colon cannot be IPv6 (which has at least two): it is IPv4 with a port.
            let port = candidate[candidate.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy(\.isNumber) else { return nil }
            candidate = candidate[..<colon]
        }
        guard let bytes = Self.presentationToBytes(String(candidate)) else { return nil }
        self.init(bytes: bytes)
    }

    /// Wraps 4 or 16 bytes, unmapping an IPv4-mapped IPv6 address.
    init(bytes: [UInt8]) {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes[12..<16])
        } else {
            self.bytes = bytes
        }
    }

    /// The canonical text (`inet_ntop`).
    public var description: String { Self.text(of: bytes) }

    /// The key the per-client limits count this address under: an IPv4 address itself, an IPv6
    /// address its /64 (`2001:db8:1:2::/64`). One IPv6 subscriber gets a whole /64 to pick source
    /// addresses from (RFC 6177), so keyed by the full address a single attacker had 2^64 fresh
    /// keys, and `--ip-per-minute` and the SMS per-IP cap held nobody.
    public var limitKey: String {
        guard bytes.count == 16 else { return description }
        return Self.text(of: Array(bytes[0..<8]) + Array(repeating: 0, count: 8)) + "/64"
    }

    private static func text(of bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes `inet_pton` gives for IPv4, else IPv6; nil when neither reads the text.
    static func presentationToBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

/// An address range written as CIDR (`10.0.0.0/8`, `fd00::/8`, or a bare address for one host).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's first address (host bits cleared).
    let base: IPAddress
    /// How many leading bits must match.
    let prefixLength: Int

    /// Parses one CIDR entry.
    /// - Throws: `TrustedProxiesError` quoting the entry when the address is not one `inet_pton`
    ///   reads or the prefix is not a number within the address's bits.
    public init(parsing text: String) throws(TrustedProxiesError) {
        let entry = text.trimmingCharacters(in: .whitespaces)
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, var bytes = IPAddress.presentationToBytes(String(first)) else {
            throw TrustedProxiesError(entry: text)
        }
        var bits = bytes.count * 8
        if parts.count == 2 {
            let prefix = parts[1]
            guard !prefix.isEmpty, prefix.count <= 3, prefix.allSatisfy(\.isASCII), prefix.allSatisfy(\.isNumber),
                let number = Int(prefix), number <= bits
            else { throw TrustedProxiesError(entry: text) }
            bits = number
        }
        // An IPv4-mapped network is the IPv4 network it maps, as addresses are (see IPAddress).
        let mapped = IPAddress(bytes: bytes)
        if mapped.bytes.count == 4, bytes.count == 16 {
            guard bits >= 96 else { throw TrustedProxiesError(entry: text) }
            bits -= 96
            bytes = mapped.bytes
        }
        for index in bytes.indices {
            let keep = min(max(bits - index * 8, 0), 8)
            bytes[index] &= keep == 8 ? 0xFF : ~(0xFF >> UInt8(keep))
        }
        base = IPAddress(bytes: bytes)
        prefixLength = bits
    }

    /// Whether `address` is in the range (never across IPv4 and IPv6).
    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        for index in base.bytes.indices {
            let keep = min(max(prefixLength - index * 8, 0), 8)
            let mask: UInt8 = keep == 8 ? 0xFF : ~(0xFF >> UInt8(keep))
            if address.bytes[index] & mask != base.bytes[index] { return false }
        }
        return true
    }

    public var description: String { "\(base)/\(prefixLength)" }
}

/// A `--trusted-proxies` entry that is not an IPv4 or IPv6 CIDR.
public struct TrustedProxiesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry as given (an address range, not personal data).
    public let entry: String
    public var description: String {
        "\(entry.debugDescription) is not an IPv4 or IPv6 CIDR such as 10.0.0.0/8, 192.0.2.7 or fd00::/8"
    }
}
