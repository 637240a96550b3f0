import PosternCrypto

/// A 16-byte digest of the account state a code depends on.
///
/// The flow that mints a code and the flow that consumes it compute it from the same parts (for a
/// reset: the uid, the address and the current password hash), so any change to that state — a new
/// password, a moved address — makes outstanding codes fail with `stateChanged`.
public struct StateBinding: Sendable, Hashable {
    /// Bytes in a binding.
    public static let length = 16
    /// The digest.
    public let bytes: [UInt8]

    /// The binding of `parts`, which are length-prefixed so that ("ab","c") ≠ ("a","bc").
    public init(_ parts: String...) { self.init(parts: parts) }

    /// The binding of `parts`.
    public init(parts: [String]) {
        var input: [UInt8] = Array("postern-binding-v1".utf8)
        for part in parts {
            let utf8 = Array(part.utf8)
            let count = UInt32(utf8.count)
            input += [UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            input += utf8
        }
        bytes = Array(SHA256.hash(input).prefix(Self.length))
    }

    /// A binding read back from a code.
    init(raw: [UInt8]) { bytes = raw }
}
