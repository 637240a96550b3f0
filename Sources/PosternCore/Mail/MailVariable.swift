/// The variables of the mail templates, such as `{{link}}` or `{{#displayName}}`; which of them a
/// template may use is its kind's to say (``MailMessageKind/variables``).
public enum MailVariable: Int, TemplateVariable {
    /// The product name shown in mails (from configuration), e.g. "Postern".
    case appName
    /// The address the mail is sent to.
    case email
    /// The account's display name, when it has one.
    case displayName
    /// An address users can write to for help, when configured.
    case supportEmail
    /// The time the request was made, `HH:mm UTC`; also what keeps subjects distinct.
    case requestedAt
    /// The date the request was made, `yyyy-MM-dd` (UTC).
    case requestedDate
    /// The action link the mail is about.
    case link
    /// The 6-digit sign-in code for typing on another device.
    case code
    /// How long the link stays valid, in words of the mail's language ("10 minutes", "3 Tage").
    case expiresIn
    /// How long the link stays valid, in whole minutes.
    case expiresInMinutes
    /// A link to reset the password (offered by notices that could be unwelcome).
    case resetLink
    /// A link to sign up, offered when a reset was asked for an address without an account.
    case signUpLink
    /// The address the account had before a change.
    case oldEmail
    /// The address the account changes to.
    case newEmail
    /// The device a sign-in was approved for ("Chrome on Linux").
    case device
    /// A phone number in its redacted form ("+49…": the country calling code only).
    case phoneNumber

    /// The name used in template source, e.g. `expiresInMinutes`.
    public var name: String {
        switch self {
        case .appName: "appName"
        case .email: "email"
        case .displayName: "displayName"
        case .supportEmail: "supportEmail"
        case .requestedAt: "requestedAt"
        case .requestedDate: "requestedDate"
        case .link: "link"
        case .code: "code"
        case .expiresIn: "expiresIn"
        case .expiresInMinutes: "expiresInMinutes"
        case .resetLink: "resetLink"
        case .signUpLink: "signUpLink"
        case .oldEmail: "oldEmail"
        case .newEmail: "newEmail"
        case .device: "device"
        case .phoneNumber: "phoneNumber"
        }
    }
}
