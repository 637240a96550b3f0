import Foundation
import PosternCrypto

/// The VERP-style envelope sender (`--bounce-address`): every message leaves with its own reverse
/// path, `LOCAL+<id>.<key>.<tag>@DOMAIN`, so a delivery report sent back to it names the message
/// it is about. `<tag>` is 16 hex digits of the action-code key's HMAC over the message id and its
/// recipient: a stranger cannot write a report that suppresses an address of their choice, and a
/// report is matched by the outbox id and that message's own recipient, never by the address it
/// mentions. The recipient is in the tag because an id alone names a message only until it is
/// used again: SQLite gives a purged outbox's ids out anew, and a tag kept from a mail to the
/// attacker's own address would then have verified for a later message to the victim.
///
/// The tag verifies while its key does: a retired key until the longest code's lifetime has
/// passed (7 days or more), longer than Postfix's 5-day `maximal_queue_lifetime` after which the
/// last report can come.
public struct BounceAddress: Sendable, Hashable, CustomStringConvertible {
    /// The local part before the `+`.
    public let localPart: String
    /// The domain the reports come to.
    public let domain: String

    /// Parses `--bounce-address bounce@bounces.example.com` (ASCII, no `+` in the local part).
    /// - Throws: `SettingsError` saying what is wrong.
    public init(_ text: String) throws(SettingsError) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[0].count <= 20,
            parts.allSatisfy({ $0.unicodeScalars.allSatisfy { Self.allowed($0) } }), !parts[0].contains("+"),
            parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains("_")
        else {
            throw SettingsError("must be an ASCII address without + such as bounce@bounces.example.com (local part at most 20 characters)")
        }
        localPart = parts[0].lowercased()
        domain = parts[1].lowercased()
    }

    private static func allowed(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "-" || scalar == "." || scalar == "_"
    }

    public var description: String { "\(localPart)@\(domain)" }

    /// What a reverse path of ours says: the message id, the key and the tag, not yet verified.
    public struct Tagged: Sendable, Hashable {
        /// The outbox id it names.
        public let messageID: Int64
        let keyID: UInt32
        let tag: String
    }

    /// The reverse path of outbox message `id` to `recipient`, tagged with the ring's active key.
    public func envelopeSender(messageID id: Int64, recipient: EmailAddress, ring: ActionCodeAuthority) -> String {
        let key = ring.activeKeyID
        return "\(localPart)+\(id).\(key).\(Self.tag(id: id, recipient: recipient, mac: ring.activeMAC))@\(domain)"
    }

    /// Whether `tagged` was written for outbox message `tagged.messageID` to `recipient` by a key
    /// of `ring`.
    public func verifies(_ tagged: Tagged, recipient: EmailAddress, ring: ActionCodeAuthority) -> Bool {
        guard let key = ring.key(id: tagged.keyID) else { return false }
        let expected = Self.tag(id: tagged.messageID, recipient: recipient, mac: key.mac)
        return ConstantTime.equals(Array(expected.utf8), Array(tagged.tag.utf8))
    }

    /// The id, key and tag a report's address holds, if it has the shape of one of ours with a
    /// key the ring still has (``verifies(_:recipient:ring:)`` checks the tag against the message).
    /// The local part is compared without regard to case (relays fold it).
    public func tagged(in address: String, ring: ActionCodeAuthority) -> Tagged? {
        let text = address.trimmingCharacters(in: CharacterSet(charactersIn: "<> \t")).lowercased()
        guard let at = text.lastIndex(of: "@"), text[text.index(after: at)...] == domain else { return nil }
        let local = text[..<at]
        let prefix = localPart + "+"
        guard local.hasPrefix(prefix) else { return nil }
        let fields = local.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count <= 19, fields[1].count <= 10, fields[2].count == 16,
            fields[0].allSatisfy(\.isASCIIDigitCharacter), fields[1].allSatisfy(\.isASCIIDigitCharacter),
            let id = Int64(fields[0]), id > 0, let keyID = UInt32(fields[1]), ring.key(id: keyID) != nil,
            fields[2].allSatisfy(\.isHexDigit)
        else { return nil }
        return Tagged(messageID: id, keyID: keyID, tag: String(fields[2]))
    }

    private static func tag(id: Int64, recipient: EmailAddress, mac: HMACKey) -> String {
        Hex.lower(mac.authenticate(Array("postern-bounce-v2|\(id)|\(recipient.normalized)".utf8)).prefix(8))
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}
