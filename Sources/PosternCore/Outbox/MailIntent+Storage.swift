extension MailIntent {
    /// The intent as one line for a database column: `name:id`, e.g. `sign-in:r_123` (the id of
    /// `signInApproved` and `newSignIn` is the device name, which holds no control characters). Cheaper to
    /// write and read than JSON, which matters once per message on the delivery path.
    public var storageText: String {
        switch self {
        case .signIn(let id), .signUp(let id), .resetPassword(let id), .verifyEmail(let id), .changeEmail(let id),
            .recoverEmail(let id), .passwordChanged(let id), .signInApproved(let id),
            .phoneTransferRequested(let id), .newSignIn(let id):
            "\(name):\(id)"
        }
    }

    /// The intent written by ``storageText``; nil for anything else.
    public init?(storageText: String) {
        guard let colon = storageText.firstIndex(of: ":") else { return nil }
        let id = String(storageText[storageText.index(after: colon)...])
        switch storageText[..<colon] {
        case "sign-in": self = .signIn(requestID: id)
        case "sign-up": self = .signUp(requestID: id)
        case "reset-password": self = .resetPassword(requestID: id)
        case "verify-email": self = .verifyEmail(requestID: id)
        case "change-email": self = .changeEmail(requestID: id)
        case "recover-email": self = .recoverEmail(requestID: id)
        case "password-changed": self = .passwordChanged(uid: id)
        case "sign-in-approved": self = .signInApproved(device: id)
        case "phone-transfer-requested": self = .phoneTransferRequested(claimID: id)
        case "new-sign-in": self = .newSignIn(device: id)
        default: return nil
        }
    }
}
