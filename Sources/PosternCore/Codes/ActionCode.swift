/// The decoded content of an action code (the `oobCode` of a link).
///
/// Wire form (62 bytes, base64url → 83 characters):
/// `version(1) ‖ keyID(4) ‖ action(1) ‖ issuedAt(4) ‖ expiresAt(4) ‖ nonce(16) ‖ binding(16) ‖ tag(16)`,
/// integers big-endian, `tag` the first 16 bytes of HMAC-SHA256 over everything before it. The code
/// holds no address or other personal data: the nonce names it in the single-use ledger, the
/// binding ties it to the account's state when it was minted.
public struct ActionCode: Sendable, Hashable {
    /// The format version this build writes and reads.
    public static let version: UInt8 = 1
    /// Bytes before the tag.
    static let signedLength = 46
    /// Bytes of the truncated HMAC tag.
    static let tagLength = 16
    /// Bytes of the whole code.
    static let byteLength = signedLength + tagLength
    /// Characters of the base64url form.
    public static let textLength = 83

    /// The key that signed the code.
    public let keyID: UInt32
    /// What the code does.
    public let action: EmailAction
    /// When it was minted, in seconds since 1970.
    public let issuedAt: Int64
    /// When it stops working, in seconds since 1970.
    public let expiresAt: Int64
    /// 128 random bits: the code's identity in the single-use ledger.
    public let nonce: [UInt8]
    /// The state binding it was minted with.
    public let binding: StateBinding
}

extension EmailAction {
    /// The action's byte in the code format; never reuse a number.
    var wireValue: UInt8 {
        switch self {
        case .signIn: 1
        case .resetPassword: 2
        case .verifyEmail: 3
        case .verifyAndChangeEmail: 4
        case .recoverEmail: 5
        }
    }

    init?(wireValue: UInt8) {
        switch wireValue {
        case 1: self = .signIn
        case 2: self = .resetPassword
        case 3: self = .verifyEmail
        case 4: self = .verifyAndChangeEmail
        case 5: self = .recoverEmail
        default: return nil
        }
    }
}
