/// What a request asked to be mailed. Request handlers record an intent in the same transaction
/// as the request; the outbox worker later decides what the mail says (the content stage), so the
/// request path never looks accounts up and answers every address alike.
public enum MailIntent: Sendable, Hashable, Codable {
    /// A sign-in link and 6-digit code for the request's address.
    case signIn(requestID: String)
    /// Password sign-up: confirm-sign-up, or account-already-exists for a taken address.
    case signUp(requestID: String)
    /// A reset link, or nothing (or the no-account notice, when enabled) for an unknown address.
    case resetPassword(requestID: String)
    /// A verification link for the account's current address.
    case verifyEmail(requestID: String)
    /// A verifyAndChangeEmail link to the new address of a pending change.
    case changeEmail(requestID: String)
    /// A recoverEmail link to the old address after a change was applied.
    case recoverEmail(requestID: String)
    /// The "your password was changed" notice.
    case passwordChanged(uid: String)
    /// The notice that a sign-in on `device` was approved from the link's page.
    case signInApproved(device: String)
    /// The notice to the owner of the account that holds a number another claim `claimID` waits for.
    case phoneTransferRequested(claimID: String)
    /// The notice of a sign-in on a device (its name and network) the account had not signed in
    /// from (`--notify-new-device`).
    case newSignIn(device: String)
    /// An operator's invitation: a link whose completion creates the address's account.
    case invitation(requestID: String)

    /// A stable name for logs and metrics.
    public var name: String {
        switch self {
        case .signIn: "sign-in"
        case .signUp: "sign-up"
        case .resetPassword: "reset-password"
        case .verifyEmail: "verify-email"
        case .changeEmail: "change-email"
        case .recoverEmail: "recover-email"
        case .passwordChanged: "password-changed"
        case .signInApproved: "sign-in-approved"
        case .phoneTransferRequested: "phone-transfer-requested"
        case .newSignIn: "new-sign-in"
        case .invitation: "invitation"
        }
    }

    /// The action request whose code the mail carries, if it carries one.
    public var requestID: String? {
        switch self {
        case .signIn(let id), .signUp(let id), .resetPassword(let id), .verifyEmail(let id), .changeEmail(let id),
            .recoverEmail(let id), .invitation(let id): id
        case .passwordChanged, .signInApproved, .phoneTransferRequested, .newSignIn: nil
        }
    }
}
