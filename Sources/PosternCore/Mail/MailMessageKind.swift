/// Every mail Postern sends, with the template variables each may use.
///
/// The raw value is the template file name (`templates/en/sign-in.subject`, `.txt`, `.html`).
public enum MailMessageKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Sign-in link and 6-digit code.
    case signIn = "sign-in"
    /// Sign-up confirmation: completing the link creates the account.
    case confirmSignUp = "confirm-sign-up"
    /// Sent instead of a sign-up confirmation when the address already has an account.
    case accountAlreadyExists = "account-already-exists"
    /// Password-reset link.
    case resetPassword = "reset-password"
    /// Notice that the password was changed.
    case passwordChanged = "password-changed"
    /// Address verification link.
    case verifyEmail = "verify-email"
    /// Sent to a new address: completing the link moves the account to it.
    case verifyAndChangeEmail = "verify-and-change-email"
    /// Sent to the old address after a change, with a link that undoes it.
    case recoverEmail = "recover-email"
    /// Sent when a reset was asked for an address without an account (off unless enabled).
    case noAccount = "no-account"
    /// Notice that a sign-in on another device was approved from the sign-in link's page.
    case signInApproved = "sign-in-approved"
    /// Told to the owner of an account that holds a phone number another account claimed with
    /// the holder's consent: it moves when the cool-off ends unless the owner objects.
    case phoneTransferRequested = "phone-transfer-requested"
    /// Notice of a sign-in on a device and network the account had not signed in from
    /// (`--notify-new-device`).
    case newSignIn = "new-sign-in"

    /// The variables every kind has, and the only ones layouts may use.
    public static let commonVariables: Set<MailVariable> = [
        .appName, .email, .displayName, .supportEmail, .requestedAt, .requestedDate,
    ]

    /// The variables templates of this kind may use.
    public var variables: Set<MailVariable> {
        Self.commonVariables.union(specificVariables)
    }

    private var specificVariables: Set<MailVariable> {
        switch self {
        case .signIn: [.link, .code, .expiresIn, .expiresInMinutes]
        case .confirmSignUp, .resetPassword, .verifyEmail: [.link, .expiresIn, .expiresInMinutes]
        case .accountAlreadyExists: [.link, .expiresIn, .expiresInMinutes, .resetLink]
        case .passwordChanged: [.resetLink]
        case .verifyAndChangeEmail, .recoverEmail: [.link, .expiresIn, .expiresInMinutes, .oldEmail, .newEmail]
        case .noAccount: [.signUpLink]
        case .signInApproved, .newSignIn: [.device]
        case .phoneTransferRequested: [.phoneNumber, .expiresIn]
        }
    }

    /// The variables a part must use, or the mail is useless (a sign-in mail without its link) or
    /// would thread under an older one (a subject without the code or the time).
    public func requiredVariables(in part: TemplatePart) -> Set<MailVariable> {
        switch (self, part) {
        case (.signIn, .subject): [.code]
        case (_, .subject): [.requestedAt]
        case (.signIn, _): [.link, .code]
        case (.passwordChanged, _), (.noAccount, _): []
        case (.signInApproved, _), (.newSignIn, _): [.device]
        case (.phoneTransferRequested, _): [.phoneNumber, .expiresIn]
        case (_, _): [.link]
        }
    }

    /// The action of the link this mail carries, if it carries one.
    public var action: EmailAction? {
        switch self {
        case .signIn, .confirmSignUp, .accountAlreadyExists: .signIn
        case .resetPassword: .resetPassword
        case .verifyEmail: .verifyEmail
        case .verifyAndChangeEmail: .verifyAndChangeEmail
        case .recoverEmail: .recoverEmail
        case .passwordChanged, .noAccount, .signInApproved, .phoneTransferRequested, .newSignIn: nil
        }
    }
}
