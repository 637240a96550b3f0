/// A checked email address: the one parser and normalizer every entry point uses.
///
/// `localPart` is kept as the user gave it (mail is sent to it unchanged); `domain` is lower-cased
/// and IDNA-encoded (ASCII "xn--" labels). Two addresses are the same account address when their
/// `normalized` forms are equal (local parts compare case-insensitively).
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The local part as given (without surrounding whitespace); may be a quoted string.
    public let localPart: String
    /// The domain, lower-cased, ASCII (A-labels).
    public let domain: String

    /// The address to send to: `localPart@domain`.
    public var address: String { "\(localPart)@\(domain)" }

    /// The key under which an address belongs to at most one account.
    public var normalized: String { "\(localPart.lowercased())@\(domain)" }

    public var description: String { address }

    /// The address as a page shows it to whoever holds a link: the first character of the local
    /// part, then "•••" ("a•••@example.org").
    public var masked: String { masked(hiding: "•••") }

    /// The address masked as ``masked`` does, with `hiding` for the rest of the local part (an SMS
    /// says "***": "•" is outside GSM-7 and would make the whole message UCS-2, 70 characters a part).
    public func masked(hiding: String) -> String { "\(localPart.prefix(1))\(hiding)@\(domain)" }

    /// Made only by the parser (`EmailAddress.parse`), which has checked both parts.
    init(checkedLocalPart: String, domain: String) {
        self.localPart = checkedLocalPart
        self.domain = domain
    }

    public static func == (lhs: EmailAddress, rhs: EmailAddress) -> Bool { lhs.normalized == rhs.normalized }
    public func hash(into hasher: inout Hasher) { hasher.combine(normalized) }
}

extension EmailAddress {
    /// Rebuilds an address the store wrote after parsing it; not for user input.
    public static func restored(localPart: String, domain: String) -> EmailAddress {
        EmailAddress(checkedLocalPart: localPart, domain: domain)
    }
}
