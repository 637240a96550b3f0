import Foundation
import PosternCrypto

/// Why mail to an address is no longer sent: the closed set the admin API and the CLI name.
///
/// The `suppressions` table keeps the reason as text, `"<kind>: <detail>"`, as ``stored(_:)``
/// writes it. Rows from before these kinds were named hold other text: the bounce intake's
/// `bounced: 5.1.1` reads as ``bounce``, its `complaint: abuse` as ``complaint``, and the delivery
/// machine's bare server reply (`550 5.1.1 unknown user`) as ``rejected``, its nearest kind.
public enum SuppressionReason: String, Sendable, Hashable, CaseIterable {
    /// A delivery report (RFC 3464) said the mail failed permanently.
    case bounce
    /// An abuse report (RFC 5965): the recipient called the mail spam. Only an operator lifts it.
    case complaint
    /// The relay refused the mail with a permanent (5xx) reply at delivery.
    case rejected

    /// The reason text stored for this kind and `detail` (a status, a server's reply).
    public func stored(_ detail: String) -> String { detail.isEmpty ? rawValue : "\(rawValue): \(detail)" }

    /// The kind of stored reason `text`; text of no kind (an older row's bare server reply) is ``rejected``.
    public init(stored text: String) {
        switch text.prefix(while: { $0 != ":" }).trimmingCharacters(in: .whitespaces).lowercased() {
        case "bounce", "bounced": self = .bounce
        case "complaint": self = .complaint
        default: self = .rejected
        }
    }

    /// Whether a sign-in by a mailed code, which proves the mailbox receives mail again, lifts it:
    /// a bounce or a rejection, never a complaint (the recipient asked for no more mail).
    public var liftedBySignIn: Bool { self != .complaint }
}

/// One suppressed address, as the store keeps it.
public struct Suppression: Sendable, Hashable {
    /// The address as the table keys it (``EmailAddress/normalized``).
    public var address: String
    public var reason: SuppressionReason
    /// The stored reason text after its kind: a status or a server's reply (may be empty).
    public var detail: String
    /// When it was suppressed (Unix seconds); a later suppression of the address moves it.
    public var suppressedAt: Int64

    /// A suppression of `address` (normalized) for `reason`, at `suppressedAt`.
    public init(address: String, reason: SuppressionReason, detail: String, suppressedAt: Int64) {
        self.address = address
        self.reason = reason
        self.detail = detail
        self.suppressedAt = suppressedAt
    }

    /// A row as stored: `text` is the reason column.
    public init(address: String, storedReason text: String, suppressedAt: Int64) {
        let reason = SuppressionReason(stored: text)
        var detail = Substring(text)
        if let colon = text.firstIndex(of: ":"), ["bounce", "bounced", "complaint", "rejected"].contains(text[..<colon].lowercased()) {
            detail = text[text.index(after: colon)...]
        }
        self.init(address: address, reason: reason, detail: detail.trimmingCharacters(in: .whitespaces), suppressedAt: suppressedAt)
    }

    /// Where the next page of a newest-first listing starts: after this row.
    public var cursor: SuppressionCursor { SuppressionCursor(suppressedAt: suppressedAt, address: address) }
}

/// A position in the newest-first listing of suppressions (by time, then address, both
/// descending): the page after it holds the rows that sort after it.
public struct SuppressionCursor: Sendable, Hashable {
    public var suppressedAt: Int64
    public var address: String

    /// The position of the row at `suppressedAt` for `address`.
    public init(suppressedAt: Int64, address: String) {
        self.suppressedAt = suppressedAt
        self.address = address
    }

    /// The opaque text the admin API and the CLI hand out (`nextCursor`): ``CursorText`` of the
    /// time and the address.
    public var text: String { CursorText.encode(suppressedAt, address) }

    /// The cursor `text` names; nil when it is not one of ours.
    public init?(text: String) {
        guard let (at, address) = CursorText.decode(text) else { return nil }
        self.init(suppressedAt: at, address: address)
    }

    /// Whether a row at `suppressedAt` for `address` sorts after this cursor (newest first).
    public func precedes(suppressedAt at: Int64, address other: String) -> Bool {
        at < suppressedAt || (at == suppressedAt && other < address)
    }
}

/// One page of the newest-first listing, and where the next starts (nil on the last page).
public struct SuppressionPage: Sendable, Hashable {
    public var suppressions: [Suppression]
    public var next: SuppressionCursor?

    /// A page of `suppressions`, the next starting after `next`.
    public init(suppressions: [Suppression], next: SuppressionCursor?) {
        self.suppressions = suppressions
        self.next = next
    }
}
