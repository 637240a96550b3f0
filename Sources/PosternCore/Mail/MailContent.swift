import Foundation

/// What one mail says: its kind and the values that kind cannot do without.
///
/// A case's associated values are the kind's required inputs, so a mail cannot be rendered
/// without its link or code; optional extras are optionals. Expiry is a point in time: the mail
/// says how long is left when it is rendered, which is at send time.
public enum MailContent: Sendable, Hashable {
    /// Sign-in link and the 6-digit code for another device.
    case signIn(link: String, code: String, expiresAt: Date)
    /// Sign-up confirmation link.
    case confirmSignUp(link: String, expiresAt: Date)
    /// The address already has an account: a sign-in link instead, and optionally a reset link.
    case accountAlreadyExists(signInLink: String, expiresAt: Date, resetLink: String?)
    /// Password-reset link.
    case resetPassword(link: String, expiresAt: Date)
    /// The password was changed; optionally a reset link for a holder who did not change it.
    case passwordChanged(resetLink: String?)
    /// Address verification link.
    case verifyEmail(link: String, expiresAt: Date)
    /// Link, sent to `newEmail`, that moves the account from `oldEmail` to it.
    case verifyAndChangeEmail(link: String, expiresAt: Date, oldEmail: EmailAddress, newEmail: EmailAddress)
    /// Link, sent to `oldEmail` after the change, that moves the account back.
    case recoverEmail(link: String, expiresAt: Date, oldEmail: EmailAddress, newEmail: EmailAddress)
    /// A reset was asked for an address without an account; optionally a sign-up link.
    case noAccount(signUpLink: String?)
    /// A sign-in on `device` was approved from the link's page.
    case signInApproved(device: String)
    /// Another account claimed the account's phone number (`phoneNumber`: its redacted form) with
    /// its holder's consent; it moves at `movesAt` unless the owner objects or releases it.
    case phoneTransferRequested(phoneNumber: String, movesAt: Date)
    /// A sign-in on `device` (its name and network), new to the account.
    case newSignIn(device: String)

    /// The message kind, which picks the templates.
    public var kind: MailMessageKind {
        switch self {
        case .signIn: .signIn
        case .confirmSignUp: .confirmSignUp
        case .accountAlreadyExists: .accountAlreadyExists
        case .resetPassword: .resetPassword
        case .passwordChanged: .passwordChanged
        case .verifyEmail: .verifyEmail
        case .verifyAndChangeEmail: .verifyAndChangeEmail
        case .recoverEmail: .recoverEmail
        case .noAccount: .noAccount
        case .signInApproved: .signInApproved
        case .phoneTransferRequested: .phoneTransferRequested
        case .newSignIn: .newSignIn
        }
    }

    /// When the link in the mail stops working, if there is one.
    public var expiresAt: Date? {
        switch self {
        case .signIn(_, _, let expiresAt), .confirmSignUp(_, let expiresAt), .accountAlreadyExists(_, let expiresAt, _),
            .resetPassword(_, let expiresAt), .verifyEmail(_, let expiresAt),
            .verifyAndChangeEmail(_, let expiresAt, _, _), .recoverEmail(_, let expiresAt, _, _):
            expiresAt
        case .phoneTransferRequested(_, let movesAt):
            movesAt
        case .passwordChanged, .noAccount, .signInApproved, .newSignIn:
            nil
        }
    }

    /// Puts the kind's own values into `context`.
    func fill(_ context: inout TemplateContext<MailVariable>) {
        switch self {
        case .signIn(let link, let code, _):
            context[.link] = link
            context[.code] = code
        case .confirmSignUp(let link, _), .resetPassword(let link, _), .verifyEmail(let link, _):
            context[.link] = link
        case .accountAlreadyExists(let signInLink, _, let resetLink):
            context[.link] = signInLink
            context[.resetLink] = resetLink
        case .passwordChanged(let resetLink):
            context[.resetLink] = resetLink
        case .verifyAndChangeEmail(let link, _, let oldEmail, let newEmail),
            .recoverEmail(let link, _, let oldEmail, let newEmail):
            context[.link] = link
            context[.oldEmail] = oldEmail.address
            context[.newEmail] = newEmail.address
        case .noAccount(let signUpLink):
            context[.signUpLink] = signUpLink
        case .signInApproved(let device), .newSignIn(let device):
            context[.device] = device
        case .phoneTransferRequested(let phoneNumber, _):
            context[.phoneNumber] = phoneNumber
        }
    }
}

/// One mail to render: what it says, to whom, and when it was asked for.
public struct MailMessage: Sendable, Hashable {
    /// The kind and its values.
    public var content: MailContent
    /// The address the mail goes to (`{{email}}`).
    public var recipient: EmailAddress
    /// When the request that caused the mail was made; shown in subjects so each one differs.
    public var requestedAt: Date
    /// The account's display name, when known (`{{displayName}}`).
    public var displayName: String?

    /// A mail of `content` to `recipient`, requested at `requestedAt`.
    public init(content: MailContent, recipient: EmailAddress, requestedAt: Date, displayName: String? = nil) {
        self.content = content
        self.recipient = recipient
        self.requestedAt = requestedAt
        self.displayName = displayName
    }

    /// The message kind, which picks the templates.
    public var kind: MailMessageKind { content.kind }
}
