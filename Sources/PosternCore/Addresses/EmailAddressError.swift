/// Why a string is not an address Postern will use. Messages name what is wrong, never the address.
public struct EmailAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reasons, for tests and metrics.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        case empty
        case controlCharacter
        case invisibleCharacter
        case missingAt
        case multipleAt
        case displayName
        case emptyLocalPart
        case localPartTooLong
        case invalidLocalPart
        case nonASCIILocalPart
        case unterminatedQuote
        case emptyDomain
        case invalidDomain
        case domainTooLong
        case addressLiteral
        case tooLong
        case notMailable
    }

    /// Why the address was refused.
    public let reason: Reason

    /// Creates the error for `reason`.
    public init(_ reason: Reason) { self.reason = reason }

    /// A sentence a person can act on.
    public var description: String {
        switch reason {
        case .empty: "The email address is empty."
        case .controlCharacter: "The email address contains a line break or another control character."
        case .invisibleCharacter: "The email address contains an invisible formatting character."
        case .missingAt: "The email address has no @."
        case .multipleAt: "The email address has more than one @; quote the local part if it really contains one."
        case .displayName: "Give only the address itself, without a name, angle brackets, spaces or commas."
        case .emptyLocalPart: "The email address has nothing before the @."
        case .localPartTooLong: "The part before the @ is longer than 64 characters."
        case .invalidLocalPart: "The part before the @ contains a character addresses cannot have, or a misplaced dot."
        case .nonASCIILocalPart: "The part before the @ has non-ASCII characters, which this server cannot send to."
        case .unterminatedQuote: "The quoted part before the @ is not closed."
        case .emptyDomain: "The email address has nothing after the @."
        case .invalidDomain: "The domain after the @ is not a valid host name."
        case .domainTooLong: "The domain after the @ is too long."
        case .addressLiteral: "Addresses at an IP literal ([…]) are not accepted."
        case .tooLong: "The email address is longer than 254 characters."
        case .notMailable: "The quoted part before the @ has spaces or angle brackets, which no mail this server sends can carry."
        }
    }
}
