import PosternAPI

/// Why a code was refused. Inside Postern each reason is its own case (for logs and metrics);
/// outside, `publicCode` maps them to the two codes API.md names.
public struct ActionCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reasons, for switching and for metrics labels.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// Not base64url of the right length or version.
        case malformed
        /// Signed by a key the ring does not hold (never existed or removed).
        case unknownKey
        /// The tag does not match: altered or forged.
        case badSignature
        /// Past its expiry.
        case expired
        /// A valid code for a different action.
        case wrongAction
        /// The account changed since the code was minted (new password, moved address).
        case stateChanged
        /// Consumed before.
        case alreadyUsed
    }

    /// Why the code was refused.
    public let reason: Reason

    public static let malformed = ActionCodeError(reason: .malformed)
    public static let unknownKey = ActionCodeError(reason: .unknownKey)
    public static let badSignature = ActionCodeError(reason: .badSignature)
    public static let expired = ActionCodeError(reason: .expired)
    public static let wrongAction = ActionCodeError(reason: .wrongAction)
    public static let stateChanged = ActionCodeError(reason: .stateChanged)
    public static let alreadyUsed = ActionCodeError(reason: .alreadyUsed)

    /// The API error code: `EXPIRED_OOB_CODE` for an expired code, `INVALID_OOB_CODE` for the rest.
    public var publicCode: APIErrorCode { reason == .expired ? .expiredOOBCode : .invalidOOBCode }

    /// A sentence for a developer; never contains the code.
    public var description: String {
        switch reason {
        case .expired: "The action code has expired."
        default: "The action code is invalid: \(reason.rawValue)."
        }
    }
}
