/// Why a message could not be built; raised before any byte of it exists.
///
/// The description names the field, never its value: addresses and names are personal data.
public struct MimeError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Sendable, Hashable {
        case controlCharacterInDisplayName = "display name contains a control character (CR, LF or other)"
        case controlCharacterInAddress = "address contains a control character, space or angle bracket"
        case nonASCIIAddress = "address is not ASCII (SMTPUTF8 is not supported)"
        case controlCharacterInSubject = "subject contains a control character (CR, LF or other)"
        case invalidMessageIDToken = "message-ID token must be 8 to 64 characters of A-Z a-z 0-9 - _"
        case invalidLanguageTag = "content language is not a language tag"
        case invalidAddress = "mailbox is not an address or `Name <address>`"
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// A display name holds CR, LF, a tab or another control character.
    public static let controlCharacterInDisplayName = MimeError(.controlCharacterInDisplayName)
    /// An address holds a control character, whitespace or `<`/`>`.
    public static let controlCharacterInAddress = MimeError(.controlCharacterInAddress)
    /// An address has non-ASCII characters, which need SMTPUTF8.
    public static let nonASCIIAddress = MimeError(.nonASCIIAddress)
    /// The subject holds CR, LF or another control character.
    public static let controlCharacterInSubject = MimeError(.controlCharacterInSubject)
    /// The random token for the Message-ID is too short, too long or has other characters.
    public static let invalidMessageIDToken = MimeError(.invalidMessageIDToken)
    /// The Content-Language value is not a language tag.
    public static let invalidLanguageTag = MimeError(.invalidLanguageTag)
    /// A mailbox text (`--mail-from`) is neither `address` nor `Name <address>` with a valid address.
    public static let invalidAddress = MimeError(.invalidAddress)

    /// What is wrong, naming the field but not its value.
    public var description: String { base.rawValue }
}
