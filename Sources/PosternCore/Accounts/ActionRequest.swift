/// A recorded request for an emailed action: what was asked, for which address, and the state of
/// the one code the outbox worker mints for it. The code's nonce is the request's id, so a code
/// names its request and the single-use ledger names both.
public struct ActionRequest: Sendable, Hashable {
    /// What the request is for.
    public enum Purpose: String, Sendable, Hashable, CaseIterable {
        case signIn = "sign-in"
        case signUp = "sign-up"
        case resetPassword = "reset-password"
        case verifyEmail = "verify-email"
        case changeEmail = "change-email"
        case recoverEmail = "recover-email"
        /// An operator's invitation: a sign-in link whose completion creates the account of its
        /// address whatever ``SignUpPolicy`` says (`postern users invite`).
        case invitation

        /// The action (link mode) of the code minted for it.
        public var action: EmailAction {
            switch self {
            case .signIn, .signUp, .invitation: .signIn
            case .resetPassword: .resetPassword
            case .verifyEmail: .verifyEmail
            case .changeEmail: .verifyAndChangeEmail
            case .recoverEmail: .recoverEmail
            }
        }
    }

    /// 16 random bytes, base64url: also the nonce of the request's code.
    public var id: String
    /// What the request is for.
    public var purpose: Purpose
    /// The address the mail goes to.
    public var email: EmailAddress
    /// The account it concerns: the session's account for sign-in/sign-up (an anonymous session to
    /// upgrade), the account for verify/change/recover, the looked-up account for a reset.
    public var uid: String?
    /// The other address of a change: the old one for `changeEmail`, the new one for `recoverEmail`.
    public var otherEmail: EmailAddress?
    /// The scrypt hash of the password chosen at sign-up.
    public var passwordHash: String?
    /// Where the app wants the user to land, already checked against the allowed hosts.
    public var continueURL: String?
    /// The locale the request asked for.
    public var locale: String?
    /// PKCE S256 challenge (base64url SHA-256 of the verifier).
    public var codeChallenge: String?
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When the request and its code stop working.
    public var expiresAt: Int64
    /// The action-code key the sign-in mail's 6-digit code is derived under (sign-in requests).
    public var sixDigitKeyID: UInt32?
    /// Wrong 6-digit tries so far; 5 kill the code.
    public var wrongTries: Int
    /// When it was completed, if it was.
    public var consumedAt: Int64?
    /// Set when the asking device waits for an approval from the link's page ("approve on your
    /// other device"); nil for a plain sign-in link.
    public var approval: Approval?
    /// A sign-in link bound to the browser that asked (`bindBrowser`): `codeChallenge` is the
    /// S256 of that browser's `postern_browser` cookie, so the link completes only where the
    /// cookie is sent (or by the typed 6-digit code), and the hosted page can tell that browser.
    public var browserBound: Bool

    /// An approval the asking device waits for: the number it shows (the owner types it on the
    /// page), the device's name, and when the owner typed the right number.
    public struct Approval: Sendable, Hashable {
        /// The 2-digit number (10–99) the waiting device shows.
        public var number: Int
        /// The waiting device as the page names it ("Chrome on Linux").
        public var device: String
        /// When the right number was typed.
        public var approvedAt: Int64?

        public init(number: Int, device: String, approvedAt: Int64? = nil) {
            self.number = number
            self.device = device
            self.approvedAt = approvedAt
        }
    }

    /// Creates a request.
    public init(
        id: String, purpose: Purpose, email: EmailAddress, uid: String? = nil, otherEmail: EmailAddress? = nil,
        passwordHash: String? = nil, continueURL: String? = nil, locale: String? = nil, codeChallenge: String? = nil,
        createdAt: Int64, expiresAt: Int64, sixDigitKeyID: UInt32? = nil,
        wrongTries: Int = 0, consumedAt: Int64? = nil, approval: Approval? = nil, browserBound: Bool = false
    ) {
        self.id = id
        self.purpose = purpose
        self.email = email
        self.uid = uid
        self.otherEmail = otherEmail
        self.passwordHash = passwordHash
        self.continueURL = continueURL
        self.locale = locale
        self.codeChallenge = codeChallenge
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.sixDigitKeyID = sixDigitKeyID
        self.wrongTries = wrongTries
        self.consumedAt = consumedAt
        self.approval = approval
        self.browserBound = browserBound
    }
}

/// A refresh token as stored: only its SHA-256, its family (one sign-in's rotation chain) and times.
public struct RefreshTokenRecord: Sendable, Hashable {
    /// SHA-256 of the token.
    public var hash: [UInt8]
    /// The rotation chain it belongs to.
    public var family: String
    /// Whose session it is.
    public var uid: String
    /// When the session authenticated (the ID token's `auth_time`).
    public var authTime: Int64
    /// How the session signed in (`sign_in_method`).
    public var method: String
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When the token stops working.
    public var expiresAt: Int64
    /// When it was exchanged for its successor; presenting it again revokes the family.
    public var rotatedAt: Int64?
    /// Revoked by sign-out, reuse, a password reset or an address recovery.
    public var revoked: Bool
    /// The OpenID Connect client it was issued to, which alone may refresh it; nil for a session
    /// of the API (`/v1/token`), which refuses a client's token.
    public var clientID: String?

    /// Creates a record.
    public init(
        hash: [UInt8], family: String, uid: String, authTime: Int64, method: String, createdAt: Int64,
        expiresAt: Int64, rotatedAt: Int64? = nil, revoked: Bool = false, clientID: String? = nil
    ) {
        self.clientID = clientID
        self.hash = hash
        self.family = family
        self.uid = uid
        self.authTime = authTime
        self.method = method
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.rotatedAt = rotatedAt
        self.revoked = revoked
    }
}
