/// The five things an emailed link can do; the raw value is the `mode` query parameter of the link.
public enum EmailAction: String, Sendable, Hashable, CaseIterable, Codable {
    case signIn
    case resetPassword
    case verifyEmail
    case verifyAndChangeEmail
    case recoverEmail
}
