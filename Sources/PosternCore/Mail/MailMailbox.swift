import Foundation

/// An address with an optional display name, as in `From: Postern <no-reply@example.com>`.
///
/// Checked when made: a display name or address with CR, LF or another control character (a
/// header injection) is refused, so building a message from mailboxes cannot fail on them.
public struct MailMailbox: Sendable, Hashable {
    /// The address.
    public let address: EmailAddress
    /// The display name, if any (nil for an empty one).
    public let displayName: String?

    /// A mailbox for `address`, shown as `displayName`.
    ///
    /// - Throws: ``MimeError/controlCharacterInDisplayName`` when the name has a control character;
    ///   ``MimeError/controlCharacterInAddress`` when the address has one (or whitespace or `<>`);
    ///   ``MimeError/nonASCIIAddress`` when the address is not ASCII.
    public init(_ address: EmailAddress, displayName: String? = nil) throws(MimeError) {
        if let problem = Self.problem(with: address) { throw problem }
        if let displayName, displayName.unicodeScalars.contains(where: ControlCharacters.isControl) {
            throw .controlCharacterInDisplayName
        }
        self.address = address
        self.displayName = displayName?.isEmpty == true ? nil : displayName
    }

    /// Why `address` cannot be put in a header, or nil when it can: the one rule, which the flows
    /// also apply when a request names an address (a quoted local part may hold spaces and angle
    /// brackets that `EmailAddress.parse` accepts and no message could carry).
    public static func problem(with address: EmailAddress) -> MimeError? {
        for byte in address.address.utf8 {
            if byte >= 0x80 { return .nonASCIIAddress }
            if byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") {
                return .controlCharacterInAddress
            }
        }
        return nil
    }

    /// Parses `address`, `Name <address>` or `"Quoted, Name" <address>` (as in `--mail-from`).
    ///
    /// - Throws: ``MimeError/controlCharacterInDisplayName`` when the text has a control character
    ///   (CR/LF injection); ``MimeError/invalidAddress`` when the address does not parse
    ///   (`EmailAddress.parse`); the errors of ``init(_:displayName:)``.
    public static func parse(_ text: String) throws(MimeError) -> MailMailbox {
        if text.unicodeScalars.contains(where: ControlCharacters.isControl) { throw .controlCharacterInDisplayName }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var name: String?
        var addressText = trimmed
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            addressText = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            var given = trimmed[..<open].trimmingCharacters(in: .whitespaces)
            if given.count >= 2, given.hasPrefix("\""), given.hasSuffix("\"") {
                var unquoted = ""
                var escaped = false
                for character in given.dropFirst().dropLast() {
                    if !escaped && character == "\\" {
                        escaped = true
                        continue
                    }
                    escaped = false
                    unquoted.append(character)
                }
                given = unquoted
            }
            name = given.isEmpty ? nil : given
        }
        let address: EmailAddress
        do {
            address = try EmailAddress.parse(addressText)
        } catch {
            throw .invalidAddress
        }
        return try MailMailbox(address, displayName: name)
    }

    /// The domain Message-IDs of mail from this mailbox are made on.
    var domain: String { address.domain }
}
