import Foundation

/// Which addresses Postern's outgoing HTTP may reach: the webhook endpoints, the HTTP mail provider
/// (`--smtp-url https://…`) and the SMS gateways (`json:URL`, `--sms-twilio-base-url`). Loopback,
/// link-local, private (RFC 1918, unique local, CGNAT 100.64.0.0/10), unspecified, reserved and
/// multicast addresses are refused unless `--allow-private-targets` lists them: an admin who
/// registers `http://169.254.169.254/…` or `http://127.0.0.1:5432/` would otherwise have the
/// daemon knock on the machine's own services and its cloud's metadata (SSRF).
///
/// Two checks use it. A URL whose host is a literal address, in any spelling a resolver or curl
/// reads (`0x7f000001`, `2130706433`, `0177.1`, `[::ffff:127.0.0.1]`), is refused when it is set
/// or registered, naming the setting. And the address a transfer actually connects to, after
/// the name is resolved, is checked before the socket is opened (the Mail layer's libcurl open
/// socket callback), so neither a name that resolves to loopback nor DNS rebinding gets past.
public struct TargetAddressPolicy: Sendable, Equatable {
    /// The ranges `--allow-private-targets` lets through.
    public let allowed: [IPNetwork]

    /// Refuses the ranges below except those in `allowed`.
    public init(allowing allowed: [IPNetwork] = []) { self.allowed = allowed }

    /// The refused ranges and what each is called in an error (with its article).
    static let refusedRanges: [(network: String, kind: String)] = [
        ("0.0.0.0/8", "an unspecified"), ("127.0.0.0/8", "a loopback"), ("10.0.0.0/8", "a private"),
        ("172.16.0.0/12", "a private"), ("192.168.0.0/16", "a private"), ("100.64.0.0/10", "a shared (CGNAT)"),
        ("169.254.0.0/16", "a link-local"), ("224.0.0.0/4", "a multicast"), ("240.0.0.0/4", "a reserved"),
        ("::/128", "an unspecified"), ("::1/128", "a loopback"), ("::/96", "an IPv4-compatible"), ("fc00::/7", "a unique local"),
        ("fe80::/10", "a link-local"), ("fec0::/10", "a site-local"), ("ff00::/8", "a multicast"),
    ]
    private static let refused: [(network: IPNetwork, kind: String)] = refusedRanges.compactMap { entry in
        (try? IPNetwork(parsing: entry.network)).map { ($0, entry.kind) }
    }

    /// What kind of refused address `address` is (`a loopback`, `an unspecified`, …), or nil
    /// when it may be reached.
    public func refusal(of address: IPAddress) -> String? {
        guard let kind = Self.refused.first(where: { $0.network.contains(address) })?.kind else { return nil }
        return allowed.contains(where: { $0.contains(address) }) ? nil : kind
    }

    /// The sentence for an address refused as `kind`: names the address, never a URL (whose path
    /// or query may hold a token).
    public static func explanation(address: IPAddress, kind: String) -> String {
        "\(address) is \(kind) address; outgoing HTTP reaches such addresses only when --allow-private-targets lists them"
    }

    /// Refuses `url` when its host is a literal address this policy refuses.
    /// - Throws: `SettingsError` naming `setting` and the address (not the URL's path or query).
    public func check(url: String, setting: String) throws(SettingsError) {
        guard let address = Self.literalHost(ofURL: url), let kind = refusal(of: address) else { return }
        throw SettingsError("\(setting): \(Self.explanation(address: address, kind: kind))")
    }

    /// The address an `http(s)://` URL's host spells, or nil when it is a name: a bracketed IPv6
    /// address, or IPv4 in any form `inet_aton` (and so curl and the resolver) reads — one to
    /// four parts, each decimal, octal (`0177`) or hexadecimal (`0x7f`), the last filling the
    /// remaining bytes (`127.1`, `2130706433`).
    public static func literalHost(ofURL url: String) -> IPAddress? {
        // By scalars, as curl reads it (a combining mark after `/` joins it into one character).
        let scalars = url.unicodeScalars.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var authority = Substring(String(String.UnicodeScalarView(scalars)))
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            var inside = authority[authority.index(after: authority.startIndex)..<close]
            if let zone = inside.firstIndex(of: "%") { inside = inside[..<zone] }
            return IPAddress.presentationToBytes(inside).map { IPAddress(bytes: $0) }
        }
        var host = authority.prefix { $0 != ":" }
        if host.hasSuffix(".") { host = host.dropLast() }
        return ipv4AnyForm(host.lowercased())
    }

    /// IPv4 as `inet_aton` reads it; nil for anything else.
    static func ipv4AnyForm(_ text: String) -> IPAddress? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            var digits = Substring(part)
            var radix: UInt64 = 10
            if digits.hasPrefix("0x") {
                radix = 16
                digits = digits.dropFirst(2)
            } else if digits.hasPrefix("0"), digits.count > 1 {
                radix = 8
                digits = digits.dropFirst()
            }
            guard radix == 16 || !digits.isEmpty, digits.count <= 32 else { return nil }
            var value: UInt64 = 0
            for digit in digits {
                guard let d = digit.hexDigitValue, UInt64(d) < radix else { return nil }
                value = value * radix + UInt64(d)
                guard value <= UInt64(UInt32.max) else { return nil }
            }
            values.append(value)
        }
        // Every part but the last is one byte; the last fills the bytes left.
        guard let last = values.last, values.dropLast().allSatisfy({ $0 <= 255 }),
            last < UInt64(1) << UInt64(8 * (5 - values.count))
        else { return nil }
        var bytes = values.dropLast().map { UInt8($0) }
        for shift in stride(from: 8 * (4 - values.count), through: 0, by: -8) { bytes.append(UInt8((last >> UInt64(shift)) & 0xFF)) }
        return IPAddress(bytes: bytes)
    }
}
