import Foundation

/// An IPv4 or IPv6 address as its bytes. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is
/// taken as the IPv4 address it maps, so one client has one rate-limit key however a proxy wrote
/// it, an IPv4 network matches it, and a loopback address is loopback in either spelling.
///
/// Pure value code (Core does no C): the text is read as `inet_pton` reads it and written as
/// glibc's `inet_ntop` writes it, which IPNetworkTests hold it to.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    let bytes: [UInt8]

    /// Parses a bare address as `inet_pton` reads it; also `[v6]`, `[v6]:port` and `v4:port`,
    /// the forms some proxies write into X-Forwarded-For. Nil for anything else (host names,
    /// zone ids, `1.2.3`, empty).
    public init?(_ text: String) {
        // Spaces and tabs only (the list's whitespace in a header): Foundation's trimming cost
        // a bridged string and ran on every request (3 % of a send-link's CPU under load).
        var candidate = Self.trimmingSpacesAndTabs(Substring(text))
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
        guard let bytes = Self.presentationToBytes(candidate) else { return nil }
        self.init(bytes: bytes)
    }

    /// The address of a socket's 4 (IPv4) or 16 (IPv6) address bytes; nil for another length.
    public init?(networkBytes bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
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

    /// Whether it is an IPv4 address (a mapped IPv6 one included).
    public var isIPv4: Bool { bytes.count == 4 }

    /// The canonical text (as `inet_ntop` writes it).
    public var description: String { Self.text(of: bytes) }

    /// The key the per-client limits count this address under: an IPv4 address itself, an IPv6
    /// address its /64 (`2001:db8:1:2::/64`). One IPv6 subscriber gets a whole /64 to pick source
    /// addresses from (RFC 6177), so keyed by the full address a single attacker had 2^64 fresh
    /// keys, and `--ip-per-minute` and the SMS per-IP cap held nobody.
    public var limitKey: String {
        guard bytes.count == 16 else { return description }
        return Self.text(of: Array(bytes[0..<8]) + Array(repeating: 0, count: 8)) + "/64"
    }

    /// The network the SMS caps' shares count this address under: its /24 (IPv4) or its /48
    /// (IPv6), e.g. `203.0.113.0/24`, `2001:db8:7::/48`.
    public var networkKey: String {
        let kept = bytes.count == 4 ? 3 : 6
        return Self.text(of: Array(bytes[0..<kept]) + Array(repeating: 0, count: bytes.count - kept)) + (bytes.count == 4 ? "/24" : "/48")
    }

    /// `text` without leading and trailing spaces and tabs, scanned as bytes (ASCII, so the
    /// indices are character boundaries).
    private static func trimmingSpacesAndTabs(_ text: Substring) -> Substring {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = text.utf8.firstIndex(where: { !isSpace($0) }), let last = text.utf8.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }

    // MARK: text, as inet_ntop writes it

    private static func text(of bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return "" }
        let words = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        // The longest run of two or more zero words (the first of equals) becomes "::".
        var best: (start: Int, length: Int)? = nil
        var index = 0
        while index < 8 {
            guard words[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, words[end] == 0 { end += 1 }
            if end - index >= 2, end - index > (best?.length ?? 0) { best = (index, end - index) }
            index = end
        }
        // glibc writes ::a.b.c.d and ::ffff:a.b.c.d with the IPv4 address dotted.
        if let best, best.start == 0, best.length == 6 || (best.length == 5 && words[5] == 0xFFFF) {
            let prefix = best.length == 6 ? "::" : "::ffff:"
            return prefix + bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let hex = words.map { String($0, radix: 16) }
        guard let best else { return hex.joined(separator: ":") }
        let head = hex[0..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }

    // MARK: parsing, as inet_pton reads it

    /// The bytes `inet_pton` gives for IPv4 (four decimal parts, no leading zero), else IPv6; nil
    /// when neither reads the text.
    static func presentationToBytes<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        return ipv4Bytes(utf8[...]) ?? ipv6Bytes(utf8)
    }

    private static func ipv4Bytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ (0x30...0x39).contains($0) }),
                part.count == 1 || part.first != UInt8(ascii: "0")
            else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    private static func ipv6Bytes(_ text: [UInt8]) -> [UInt8]? {
        let colon = UInt8(ascii: ":")
        guard text.count >= 2 else { return nil }
        // "::" may stand once, for one or more zero words; a lone leading or trailing ":" is no address.
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        var index = 0
        if text[0] == colon {
            guard text[1] == colon else { return nil }
            sawGap = true
            index = 2
        }
        var v4Tail: [UInt8]? = nil
        while index < text.count {
            // One group: up to four hex digits, or (last) a dotted IPv4 address.
            var end = index
            while end < text.count, text[end] != colon { end += 1 }
            let group = text[index..<end]
            if group.contains(UInt8(ascii: ".")) {
                guard end == text.count, let v4 = ipv4Bytes(group) else { return nil }
                v4Tail = v4
                index = end
                break
            }
            guard (1...4).contains(group.count), let value = hexValue(group) else { return nil }
            if sawGap { tail.append(value) } else { head.append(value) }
            if end == text.count {
                index = end
                break
            }
            // `end` is a colon: another group follows, or a "::".
            if end + 1 < text.count, text[end + 1] == colon {
                guard !sawGap else { return nil }
                sawGap = true
                index = end + 2
                if index == text.count { break }
            } else {
                guard end + 1 < text.count else { return nil }
                index = end + 1
            }
        }
        let words = head.count + tail.count + (v4Tail == nil ? 0 : 2)
        guard sawGap ? words <= 7 : words == 8 else { return nil }
        var bytes: [UInt8] = []
        for word in head { bytes += [UInt8(word >> 8), UInt8(word & 0xFF)] }
        if sawGap { bytes += Array(repeating: 0, count: 2 * (8 - words)) }
        for word in tail { bytes += [UInt8(word >> 8), UInt8(word & 0xFF)] }
        if let v4Tail { bytes += v4Tail }
        return bytes
    }

    private static func hexValue(_ digits: ArraySlice<UInt8>) -> UInt16? {
        var value: UInt16 = 0
        for digit in digits {
            let nibble: UInt16
            switch digit {
            case 0x30...0x39: nibble = UInt16(digit - 0x30)
            case 0x41...0x46: nibble = UInt16(digit - 0x41 + 10)
            case 0x61...0x66: nibble = UInt16(digit - 0x61 + 10)
            default: return nil
            }
            value = value << 4 | nibble
        }
        return value
    }
}

/// An address range written as CIDR (`10.0.0.0/8`, `fd00::/8`, or a bare address for one host).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's first address (host bits cleared).
    let base: IPAddress
    /// How many leading bits must match.
    let prefixLength: Int

    /// Parses one CIDR entry.
    /// - Throws: `IPNetworkError` quoting the entry when the address is not one `inet_pton`
    ///   reads or the prefix is not a number within the address's bits.
    public init(parsing text: String) throws(IPNetworkError) {
        let entry = text.trimmingCharacters(in: .whitespaces)
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, var bytes = IPAddress.presentationToBytes(first) else {
            throw IPNetworkError(entry: text)
        }
        var bits = bytes.count * 8
        if parts.count == 2 {
            let prefix = parts[1]
            guard !prefix.isEmpty, prefix.count <= 3, prefix.allSatisfy(\.isASCII), prefix.allSatisfy(\.isNumber),
                let number = Int(prefix), number <= bits
            else { throw IPNetworkError(entry: text) }
            bits = number
        }
        // An IPv4-mapped network is the IPv4 network it maps, as addresses are (see IPAddress).
        let mapped = IPAddress(bytes: bytes)
        if mapped.bytes.count == 4, bytes.count == 16 {
            guard bits >= 96 else { throw IPNetworkError(entry: text) }
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

    /// Parses a comma-separated list of CIDR entries (empty entries skipped).
    /// - Throws: `IPNetworkError` quoting the first entry that is not a CIDR.
    public static func list(_ text: String) throws(IPNetworkError) -> [IPNetwork] {
        var networks: [IPNetwork] = []
        for entry in text.split(separator: ",") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
            networks.append(try IPNetwork(parsing: String(entry)))
        }
        return networks
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

/// A CIDR entry (`--trusted-proxies`, `--allow-private-targets`) that is not an IPv4 or IPv6 CIDR.
public struct IPNetworkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry as given (an address range, not personal data).
    public let entry: String
    /// The error for `entry`.
    public init(entry: String) { self.entry = entry }
    public var description: String {
        "\(entry.debugDescription) is not an IPv4 or IPv6 CIDR such as 10.0.0.0/8, 192.0.2.7 or fd00::/8"
    }
}
