/// The SMS content stage (``SMSComposing``), beside ``MailComposer``: what a claimed SMS says,
/// decided at delivery time. The test message is the operator's; the phone claim's and the phone
/// sign-in's codes are derived from their ids with the key ring (the phone flows).
public struct SMSComposer: SMSComposing {
    let claims: PhoneClaimSMS
    let signIn: PhoneSignInFlow

    /// The example code of a test SMS: fixed, so nobody mistakes it for a real one.
    public static let testSMSCode = "000000"

    /// What the queued SMS `intent` to `recipient` says now, or nil when there is nothing to send
    /// (the claim or sign-in request ended, or the message would go to another number).
    /// - Throws: `AuthError` when the store fails (the worker retries).
    public func composeSMS(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        switch intent {
        case .test:
            return SMSContent(kind: .test, code: Self.testSMSCode)
        case .phoneClaim, .phoneTransferNotice:
            return try claims.compose(intent, recipient: recipient)
        case .phoneSignIn(let requestID):
            return try signIn.composeSMS(requestID: requestID, recipient: recipient)
        }
    }
}
