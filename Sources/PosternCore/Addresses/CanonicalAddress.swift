/// The form of an address that per-address limits and budgets count on: one text for every
/// spelling that reaches one mailbox, so a bot cannot get a fresh allowance by re-spelling it.
///
/// For counting only — never a recipient (mail goes to the address as typed) and never an
/// account's address (that is ``EmailAddress/normalized``). The text is the normalized address
/// (local part lower-cased, domain lower-cased in IDNA A-labels, as ``EmailAddress`` keeps it),
/// then:
/// - at gmail.com and googlemail.com (one domain: gmail.com), the dots of the local part removed
///   and a `+tag` dropped: Gmail delivers `a.d.a+1@gmail.com` and `ada@googlemail.com` to one inbox;
/// - at the domains of `subaddressDomains` (`--subaddress-domains`), a `+tag` dropped.
///
/// A quoted local part is left as it is, and so is one whose `+` is its first character (there is
/// no mailbox name before it to count on).
public struct CanonicalAddress: Sendable, Hashable, CustomStringConvertible {
    /// The text counted on: `local@domain`.
    public let text: String

    public var description: String { text }

    /// The domain counted on (lower-case A-labels; gmail.com for googlemail.com): what the
    /// per-domain mail cap (``MailCaps``) counts.
    public var domain: String {
        text.lastIndex(of: "@").map { String(text[text.index(after: $0)...]) } ?? text
    }

    /// The canonical form of `email`, with `+tags` dropped at the domains of `subaddressDomains`
    /// (lower-case A-label domains, matched exactly: a subdomain is another domain).
    public init(_ email: EmailAddress, subaddressDomains: Set<String>) {
        var local = email.localPart.lowercased()
        var domain = email.domain
        let quoted = local.hasPrefix("\"")
        let gmail = domain == "gmail.com" || domain == "googlemail.com"
        if gmail { domain = "gmail.com" }
        if !quoted, gmail || subaddressDomains.contains(domain) {
            if let plus = local.firstIndex(of: "+"), plus != local.startIndex {
                local = String(local[..<plus])
            }
            // A dot-atom cannot end in a dot, so removing the dots leaves at least one character.
            if gmail { local.removeAll { $0 == "." } }
        }
        text = "\(local)@\(domain)"
    }

    /// The domains whose mail providers document `+` subaddressing (`user+tag@` reaches `user@`):
    /// Microsoft's Outlook.com (outlook.com, hotmail.com, live.com, msn.com), Apple's iCloud Mail
    /// (icloud.com, me.com, mac.com), Fastmail (fastmail.com, fastmail.fm) and Proton Mail
    /// (proton.me, protonmail.com, protonmail.ch, pm.me). Yahoo is not one: its disposable
    /// addresses are `basename-keyword@yahoo.com` with a base name chosen apart from the mailbox's,
    /// so no rule on the text finds the mailbox; and a `-` in a local part is most often a name's.
    /// Gmail's rules are built in and not in this list.
    public static let defaultSubaddressDomains: [String] = [
        "outlook.com", "hotmail.com", "live.com", "msn.com",
        "icloud.com", "me.com", "mac.com",
        "fastmail.com", "fastmail.fm",
        "proton.me", "protonmail.com", "protonmail.ch", "pm.me",
    ]
}
