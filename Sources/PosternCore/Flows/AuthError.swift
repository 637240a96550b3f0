/// An error a caller of the flows sees: the HTTP status, the API's `UPPER_SNAKE_CASE` code and a
/// sentence for a developer. Messages never contain codes, tokens, passwords or addresses.
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status that carries it.
    public let status: Int
    /// The API error code.
    public let code: String
    /// A sentence for a developer.
    public let message: String
    /// Extra fields of the error object (`anonymousUid` for `MIGRATION_REQUIRED`, `retryAfter`).
    public let details: [String: String]
    /// What went wrong inside, for the operator's log only — never in an answer (a store error
    /// names the statement that failed). Set for 5xx errors.
    public let logDetail: String?

    /// Creates an error.
    public init(status: Int, code: String, message: String, details: [String: String] = [:], logDetail: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.logDetail = logDetail
    }

    public var description: String { "\(code): \(message)" }

    /// A field is missing, malformed or of the wrong type; the message names it.
    public static func invalidArgument(_ message: String) -> AuthError {
        AuthError(status: 400, code: "INVALID_ARGUMENT", message: message)
    }
    /// The address is not one Postern accepts.
    public static func invalidEmail(_ error: EmailAddressError) -> AuthError {
        AuthError(status: 400, code: "INVALID_EMAIL", message: error.description)
    }
    /// A code failed verification (mapped from `ActionCodeError`).
    public static func code(_ error: ActionCodeError) -> AuthError {
        AuthError(status: 400, code: error.publicCode, message: error.description)
    }
    /// The code is not valid; `message` says why in words a person can act on.
    public static func invalidCode(_ message: String) -> AuthError {
        AuthError(status: 400, code: "INVALID_OOB_CODE", message: message)
    }
    public static let emailMismatch = AuthError(
        status: 400, code: "EMAIL_MISMATCH", message: "The address given is not the one the link was sent to.")
    public static let invalidCodeVerifier = AuthError(
        status: 400, code: "INVALID_CODE_VERIFIER",
        message: "This link was requested with PKCE: give the codeVerifier of the request, or, on another device, the address the link was sent to.")
    public static func migrationRequired(anonymousUid: String) -> AuthError {
        AuthError(
            status: 409, code: "MIGRATION_REQUIRED",
            message: "The address belongs to an existing account; the anonymous session would be replaced. Retry with allowMigration after moving the app's data.",
            details: ["anonymousUid": anonymousUid])
    }
    public static let credentialAlreadyInUse = AuthError(
        status: 409, code: "CREDENTIAL_ALREADY_IN_USE", message: "The address belongs to another account.")
    public static let emailExists = AuthError(
        status: 409, code: "EMAIL_EXISTS", message: "The new address already belongs to another account.")
    public static func weakPassword(_ message: String) -> AuthError {
        AuthError(status: 400, code: "WEAK_PASSWORD", message: message)
    }
    public static let invalidLoginCredentials = AuthError(
        status: 400, code: "INVALID_LOGIN_CREDENTIALS", message: "The address or the password is wrong.")
    public static let userDisabled = AuthError(status: 400, code: "USER_DISABLED", message: "The account is disabled.")
    public static let tokenRevoked = AuthError(
        status: 401, code: "TOKEN_REVOKED", message: "The refresh token was revoked; sign in again.")
    public static let invalidRefreshToken = AuthError(
        status: 400, code: "INVALID_REFRESH_TOKEN", message: "The refresh token is unknown or expired.")
    public static let invalidIDToken = AuthError(
        status: 401, code: "INVALID_ID_TOKEN", message: "The ID token is missing, malformed, expired or revoked.")
    public static let requiresRecentLogin = AuthError(
        status: 401, code: "REQUIRES_RECENT_LOGIN", message: "This needs a sign-in within the last 5 minutes.")
    public static let userNotFound = AuthError(status: 404, code: "USER_NOT_FOUND", message: "There is no such user.")
    public static func invalidContinueURL(_ message: String) -> AuthError {
        AuthError(status: 400, code: "INVALID_CONTINUE_URI", message: message)
    }
    public static func tooManyAttempts(retryAfter: Int64) -> AuthError {
        AuthError(
            status: 429, code: "TOO_MANY_ATTEMPTS_TRY_LATER", message: "Too many attempts; try again later.",
            details: ["retryAfter": String(max(retryAfter, 1))])
    }
    /// The store (or another dependency) failed; the answer says a fixed sentence, `detail` goes
    /// to the log.
    public static func unavailable(_ detail: String) -> AuthError {
        AuthError(
            status: 503, code: "UNAVAILABLE", message: "The service cannot reach its database just now; try again shortly.",
            logDetail: detail)
    }
    /// A fault inside the service; the answer says a fixed sentence, `detail` goes to the log.
    public static func internalError(_ detail: String) -> AuthError {
        AuthError(status: 500, code: "INTERNAL", message: "Something went wrong inside the service; it has been logged.", logDetail: detail)
    }
}
