/// Why a string is not a phone number Postern will use. Messages name what is wrong, never the
/// number (a phone number is personal data, and a caller's typo may be a real number).
public struct PhoneNumberError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reasons, for tests and metrics.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        case empty
        case controlCharacter
        case letters
        case extensionNotAllowed
        case invalidCharacter
        case misplacedPlus
        case nationalWithoutRegion
        case unknownRegion
        case countryCodeZero
        case unknownCountryCode
        case tooLong
        case tooShort
        /// Not in a range its country's numbering plan assigns (libphonenumber): `+491234`.
        case invalidNumber
        /// Valid, but not a mobile's: premium rate, shared cost, toll free, a fixed line…
        case notMobile
    }

    /// Why the number was refused.
    public let reason: Reason

    /// Creates the error for `reason`.
    public init(_ reason: Reason) { self.reason = reason }

    /// A sentence a person can act on.
    public var description: String {
        switch reason {
        case .empty: "The phone number is empty."
        case .controlCharacter: "The phone number contains a line break or another control or invisible character."
        case .letters: "The phone number contains letters; give digits only."
        case .extensionNotAllowed: "The phone number has an extension; give the number of a mobile phone without one."
        case .invalidCharacter: "The phone number contains a character other than digits, a leading +, spaces, dashes, dots and parentheses."
        case .misplacedPlus: "The phone number has a + that is not its first character."
        case .nationalWithoutRegion: "Give the number in international form, starting with + and the country code."
        case .unknownRegion: "The default region is not a country this server knows (give an ISO 3166 code such as DE or US)."
        case .countryCodeZero: "A country code cannot start with 0."
        case .unknownCountryCode: "The number does not start with an assigned country code."
        case .tooLong: "The phone number has more than 15 digits."
        case .tooShort: "The phone number has too few digits after its country code."
        case .invalidNumber: "The phone number is not one its country's numbering plan assigns; check the country code and the digits."
        case .notMobile:
            "The phone number is not a mobile's (it is a landline, toll-free, premium-rate, shared-cost, VoIP, personal or company number); give a mobile number that can receive SMS."
        }
    }
}
