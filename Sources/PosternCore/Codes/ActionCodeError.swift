import PosternAPI

/// Why a code was refused. Inside Postern each reason is its own case (for logs and metrics);
/// outside, `publicCode` maps them to the codes API.md names: the reasons that concern only the
/// code its holder has (used, expired, superseded, opened in another browser) are told, every
/// other one is the generic `INVALID_OOB_CODE`.
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
        /// Ended unused because another link of the same kind for the same address was used
        /// (or a reset ended the address's sign-in links).
        case superseded
        /// Bound to the browser that asked for it (`bindBrowser`), and presented without that
        /// browser's cookie.
        case otherBrowser
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
    public static let superseded = ActionCodeError(reason: .superseded)
    public static let otherBrowser = ActionCodeError(reason: .otherBrowser)

    /// The API error code: `EXPIRED_OOB_CODE`, `LINK_USED`, `LINK_SUPERSEDED` and
    /// `LINK_OTHER_BROWSER` for the reasons a valid signature allows to tell, `INVALID_OOB_CODE`
    /// for the rest (a forged, unknown or malformed code, another action, a changed account).
    public var publicCode: APIErrorCode {
        switch reason {
        case .expired: .expiredOOBCode
        case .alreadyUsed: .linkUsed
        case .superseded: .linkSuperseded
        case .otherBrowser: .linkOtherBrowser
        case .malformed, .unknownKey, .badSignature, .wrongAction, .stateChanged: .invalidOOBCode
        }
    }

    /// The label of `postern_link_failures_total{reason=…}`: the public reason (`used`,
    /// `expired`, `superseded`, `other_browser`), and `invalid` for every generic one.
    public var metricLabel: String {
        switch reason {
        case .expired: "expired"
        case .alreadyUsed: "used"
        case .superseded: "superseded"
        case .otherBrowser: "other_browser"
        case .malformed, .unknownKey, .badSignature, .wrongAction, .stateChanged: "invalid"
        }
    }

    /// A sentence for a developer (and the CLI); never contains the code.
    public var description: String {
        switch reason {
        case .expired: "This link has expired: ask for a new one."
        case .alreadyUsed: "This link was already used: ask for a new one if you need to sign in again."
        case .superseded: "A newer link for the same address was used, so this one no longer works: ask for a new one if you need it."
        case .otherBrowser:
            "This link was asked for in another browser: open it in the browser you asked from, or type the 6-digit code from the mail there."
        default: "The action code is invalid: \(reason.rawValue)."
        }
    }
}
