import Foundation
import PosternCrypto

/// The VERP-style envelope sender (`--bounce-address`): every message leaves with its own reverse
/// path, `LOCAL+<id>.<key>.<tag>@DOMAIN`, so a delivery report sent back to it names the message
/// it is about. `<tag>` is 16 hex digits of the action-code key's HMAC over the message id: a
/// stranger cannot write a report that suppresses an address of their choice, and a report is
/// matched by the outbox id alone, never by the address it mentions.
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

    /// The reverse path of outbox message `id`, tagged with the ring's active key.
    public func envelopeSender(messageID id: Int64, ring: ActionCodeAuthority) -> String {
        let key = ring.activeKeyID
        return "\(localPart)+\(id).\(key).\(Self.tag(id: id, mac: ring.activeMAC))@\(domain)"
    }

    /// The outbox id a report's address names, if it is one of ours with a tag that verifies.
    /// The local part is compared without regard to case (relays fold it).
    public func messageID(in address: String, ring: ActionCodeAuthority) -> Int64? {
        let text = address.trimmingCharacters(in: CharacterSet(charactersIn: "<> \t")).lowercased()
        guard let at = text.lastIndex(of: "@"), text[text.index(after: at)...] == domain else { return nil }
        let local = text[..<at]
        let prefix = localPart + "+"
        guard local.hasPrefix(prefix) else { return nil }
        let fields = local.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count <= 19, fields[1].count <= 10, fields[2].count == 16,
            fields[0].allSatisfy(\.isASCIIDigitCharacter), fields[1].allSatisfy(\.isASCIIDigitCharacter),
            let id = Int64(fields[0]), id > 0, let keyID = UInt32(fields[1]), let key = ring.key(id: keyID)
        else { return nil }
        let expected = Self.tag(id: id, mac: key.mac)
        return ConstantTime.equals(Array(expected.utf8), Array(fields[2].utf8)) ? id : nil
    }

    private static func tag(id: Int64, mac: HMACKey) -> String {
        mac.authenticate(Array("postern-bounce|\(id)".utf8)).prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}
