/// Byte-level helpers for header values (ASCII): Foundation's `trimmingCharacters` and
/// `lowercased` cost a bridged string each, and ran on every request (a profile of send-link
/// under load showed ~6% in them).
enum HTTPWhitespace {
    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed<C: BidirectionalCollection>(_ bytes: C) -> C.SubSequence where C.Element == UInt8 {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }

    /// An ASCII letter in lower case; other bytes as they are.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
