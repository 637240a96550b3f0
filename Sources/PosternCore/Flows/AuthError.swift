import PosternAPI

/// An error a caller of the flows sees: what kind of failure it is, the API's `UPPER_SNAKE_CASE`
/// code and a sentence for a developer. Messages never contain codes, tokens, passwords or
/// addresses. The kind is what the transports map: the HTTP layer to a status, the CLI to an exit
/// code — Core knows neither.
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure: the one thing a transport needs to pick its status or exit code.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The input is malformed, or the credential in it is wrong, used or expired (HTTP 400).
        case invalidInput
        /// The caller's token is missing, wrong, revoked or too old for this (401).
        case unauthorized
        /// The request is understood, but the operator's rules refuse it (403): sign-ups closed
        /// to it, or a hook's deny.
        case forbidden
        /// The thing named does not exist, or is not offered here (404).
        case notFound
        /// The request is well formed but conflicts with the state (409).
        case conflict
        /// Too many attempts; `details["retryAfter"]` says when to try again (429).
        case rateLimited
        /// A dependency (the store) failed; try again (503).
        case unavailable
        /// A fault inside the service (500).
        case internalFailure
    }

    /// What kind of failure.
    public let kind: Kind
    /// The API error code.
    public let code: String
    /// A sentence for a developer.
    public let message: String
    /// Extra fields of the error object (`anonymousUid` for `MIGRATION_REQUIRED`, `retryAfter`).
    public let details: [String: String]
    /// What went wrong inside, for the operator's log only — never in an answer (a store error
    /// names the statement that failed). Set for `unavailable` and `internalFailure`.
    public let logDetail: String?

    /// Creates an error with a code of the catalogue.
    public init(_ kind: Kind, code: APIErrorCode, message: String, details: [String: String] = [:], logDetail: String? = nil) {
        self.kind = kind
        self.code = code.rawValue
        self.message = message
        self.details = details
        self.logDetail = logDetail
    }

    /// Whether the fault is the service's (or its dependency's), not the caller's.
    public var isServerFault: Bool { kind == .unavailable || kind == .internalFailure }

    public var description: String { "\(code): \(message)" }

    /// A field is missing, malformed or of the wrong type; the message names it.
    public static func invalidArgument(_ message: String) -> AuthError {
        AuthError(.invalidInput, code: .invalidArgument, message: message)
    }
    /// The address is not one Postern accepts.
    public static func invalidEmail(_ error: EmailAddressError) -> AuthError {
        AuthError(.invalidInput, code: .invalidEmail, message: error.description)
    }
    /// A code failed verification (mapped from `ActionCodeError`).
    public static func code(_ error: ActionCodeError) -> AuthError {
        AuthError(.invalidInput, code: error.publicCode, message: error.description)
    }
    /// A genuine link that was already used; `signedInHere` when the browser or device
    /// presenting it is the one that completed it ("you are already signed in").
    public static func linkUsed(signedInHere: Bool) -> AuthError {
        guard signedInHere else { return .code(.alreadyUsed) }
        return AuthError(.invalidInput, code: .linkUsed,
            message: "The link was already used to sign in on this browser or device: you are already signed in.",
            details: ["signedInHere": "true"])
    }
    /// The phone number is refused; the message says why, never the number.
    public static func invalidPhoneNumber(_ error: PhoneNumberError) -> AuthError {
        AuthError(.invalidInput, code: .invalidPhoneNumber, message: error.description)
    }
    /// SMS is not sent to the number's country.
    public static let smsCountryNotAllowed = AuthError(
        .invalidInput, code: .smsCountryNotAllowed, message: "This service does not send SMS to that country.")
    /// The code is not valid; `message` says why in words a person can act on.
    public static func invalidCode(_ message: String) -> AuthError {
        AuthError(.invalidInput, code: .invalidOOBCode, message: message)
    }
    public static let emailMismatch = AuthError(.invalidInput, code: .emailMismatch, message: "The address given is not the one the link was sent to.")
    public static let invalidCodeVerifier = AuthError(.invalidInput, code: .invalidCodeVerifier,
        message: "This link was requested with PKCE: give the codeVerifier of the request; on another device, type the 6-digit code from the mail instead.")
    public static func migrationRequired(anonymousUid: String) -> AuthError {
        AuthError(.conflict, code: .migrationRequired,
            message: "The address belongs to an existing account; the anonymous session would be replaced. Retry with allowMigration after moving the app's data.",
            details: ["anonymousUid": anonymousUid])
    }
    public static let credentialAlreadyInUse = AuthError(.conflict, code: .credentialAlreadyInUse, message: "The address belongs to another account.")
    public static let linkOtherSession = AuthError(
        .conflict, code: .linkOtherSession,
        message: "This session did not ask for the link: ask for it from here (with this session's idToken), or complete it without one.")
    /// A phone sign-in in a normal session whose number another account holds verified.
    /// Every refusal of a provider's ID token: one answer; `reason` (which check failed, never a
    /// part of the token) goes to the operator's log only.
    public static func invalidProviderToken(_ reason: String) -> AuthError {
        AuthError(
            .invalidInput, code: .invalidProviderToken,
            message: "The provider's ID token was refused: forged, expired, for another app or issuer, used before, or its nonce does not match.",
            logDetail: reason)
    }
    public static let providerNotConfigured = AuthError(
        .notFound, code: .providerNotConfigured, message: "No identity provider of that name is configured (--identity-providers).")
    public static let accountExistsWithDifferentCredential = AuthError(
        .conflict, code: .accountExistsWithDifferentCredential,
        message: "The provider's address has an account this sign-in may not join yet: sign in by email link, then link the provider.")
    public static let providerAlreadyLinked = AuthError(
        .conflict, code: .providerAlreadyLinked, message: "The account holds an identity of this provider already: unlink it first.")
    public static let providerNotLinked = AuthError(.notFound, code: .providerNotLinked, message: "The account has no identity of this provider.")
    public static let lastSignInMethod = AuthError(
        .conflict, code: .lastSignInMethod, message: "It is the account's last way to sign in: add another (a password, an address, a phone) first.")
    public static let providerInUse = AuthError(.conflict, code: .credentialAlreadyInUse, message: "The provider's identity belongs to another account.")
    public static let phoneInUse = AuthError(.conflict, code: .credentialAlreadyInUse, message: "The number belongs to another account.")
    /// The account is anonymous, and what was asked needs an address; `message` says what to do.
    public static func anonymousAccount(_ message: String) -> AuthError {
        AuthError(.conflict, code: .anonymousAccount, message: message)
    }
    /// Sign-up policy (``SignUpPolicy``) refuses to create the account this sign-in would create.
    public static let signUpNotAllowed = AuthError(
        .forbidden, code: .signUpNotAllowed, message: "This server does not let this sign-in create an account: sign-ups are closed, by invitation only, or limited to some domains.")
    /// An operator invited an address that has an account: nothing was sent.
    public static let invitedAccountExists = AuthError(
        .conflict, code: .emailExists, message: "The address has an account already: it signs in as it is; no invitation was sent.")
    public static let emailExists = AuthError(.conflict, code: .emailExists, message: "The new address already belongs to another account.")
    /// The password breaks `rule` of the policy; `message` says which, in English.
    public static func weakPassword(_ message: String, rule: PasswordPolicy.Rule) -> AuthError {
        AuthError(.invalidInput, code: .weakPassword, message: message, details: ["rule": rule.rawValue])
    }
    public static let invalidLoginCredentials = AuthError(.invalidInput, code: .invalidLoginCredentials, message: "The address or the password is wrong.")
    /// A hook (`--hook-before-sign-up`, `--hook-before-sign-in`) refused the sign-up or sign-in:
    /// the message is the hook's for the person (plain text, capped), or a general one.
    public static func hookDenied(message: String?) -> AuthError {
        AuthError(.forbidden, code: .hookDenied, message: message ?? hookDeniedMessage)
    }
    /// What `HOOK_DENIED` says when the hook gave no message.
    public static let hookDeniedMessage = "The sign-in was refused."
    /// A hook gave no usable answer and `--hook-failure closed` refuses the sign-in; the reason is
    /// in the operator's log only.
    public static let hookFailed = AuthError(
        .unavailable, code: .hookFailed, message: "The sign-in cannot be completed right now; try again shortly.",
        logDetail: "a hook gave no usable answer (see the hooks log line)")
    public static let userDisabled = AuthError(.invalidInput, code: .userDisabled, message: "The account is disabled.")
    public static let tokenRevoked = AuthError(.unauthorized, code: .tokenRevoked, message: "The refresh token was revoked; sign in again.")
    public static let invalidRefreshToken = AuthError(.invalidInput, code: .invalidRefreshToken, message: "The refresh token is unknown or expired.")
    public static let invalidIDToken = AuthError(.unauthorized, code: .invalidIDToken, message: "The ID token is missing, malformed, expired or revoked.")
    public static let requiresRecentLogin = AuthError(.unauthorized, code: .requiresRecentLogin, message: "This needs a sign-in within the last 5 minutes.")
    public static let userNotFound = AuthError(.notFound, code: .userNotFound, message: "There is no such user.")
    public static func invalidContinueURL(_ message: String) -> AuthError {
        AuthError(.invalidInput, code: .invalidContinueURI, message: message)
    }
    /// The request needs a solved challenge (``ChallengeGate``): `kind` is what to solve (`altcha` or
    /// the CAPTCHA service), `siteKey` the CAPTCHA's public key; `refusal` why a solution sent was
    /// not taken (for the operator's log; the caller is told only to solve a new one).
    public static func challengeRequired(kind: String, siteKey: String?, refusal: ChallengeRefusal?) -> AuthError {
        var details = ["challenge": kind, "challengeUrl": "/v1/challenge"]
        if let siteKey { details["siteKey"] = siteKey }
        return AuthError(.invalidInput, code: .challengeRequired,
            message: refusal == nil
                ? "Solve the challenge (GET /v1/challenge) and send its solution in the request's challengeSolution field."
                : "The challenge's solution was not accepted (wrong, expired or used already): solve a new one.",
            details: details, logDetail: refusal.map { "challenge solution refused: \($0.rawValue)" })
    }
    public static func tooManyAttempts(retryAfter: Int64) -> AuthError {
        AuthError(.rateLimited, code: .tooManyAttempts, message: "Too many attempts; try again later.",
            details: ["retryAfter": String(max(retryAfter, 1))])
    }
    /// The store (or another dependency) failed; the answer says a fixed sentence, `detail` goes
    /// to the log.
    public static func unavailable(_ detail: String) -> AuthError {
        AuthError(.unavailable, code: .unavailable, message: "The service cannot reach its database just now; try again shortly.",
            logDetail: detail)
    }
    /// An identity provider's keys or endpoints could not be had (`detail`, for the log: which
    /// provider and why, never a token).
    public static func providerUnavailable(_ detail: String) -> AuthError {
        AuthError(.unavailable, code: .unavailable, message: "The identity provider cannot be reached just now; try again shortly.",
            logDetail: detail)
    }
    /// A fault inside the service; the answer says a fixed sentence, `detail` goes to the log.
    public static func internalError(_ detail: String) -> AuthError {
        AuthError(.internalFailure, code: .internalFailure, message: "Something went wrong inside the service; it has been logged.", logDetail: detail)
    }

    /// No endpoint at this path.
    public static func noSuchEndpoint(_ path: String) -> AuthError {
        AuthError(.notFound, code: .notFound, message: "There is no endpoint \(path).")
    }
    /// The admin API is off: no admin token is configured.
    public static let adminDisabled = AuthError(.notFound, code: .notFound, message: "The admin API is disabled (no --admin-token).")
    /// A `.well-known` file of apps that are not configured (`setting` names the flag that would).
    public static func noAppsConfigured(_ setting: String) -> AuthError {
        AuthError(.notFound, code: .notFound, message: "No apps are configured for this file (\(setting)).")
    }
    /// A delivery-event intake whose provider is not configured (`setting` names the flag that would).
    public static func deliveryEventsNotConfigured(_ setting: String) -> AuthError {
        AuthError(.notFound, code: .notFound, message: "Delivery events of this provider are not taken here (\(setting) is not set).")
    }
    /// A provider's delivery event whose signature, credentials, topic or certificate URL was
    /// refused, or a replay; `reason` says which, never a secret.
    public static func deliveryEventRefused(_ reason: String) -> AuthError {
        AuthError(.unauthorized, code: .unauthorized, message: "The delivery event was refused: \(reason).")
    }
    /// The admin token is missing or wrong.
    public static let adminTokenWrong = AuthError(.unauthorized, code: .unauthorized, message: "The admin token is missing or wrong.")
    /// A phone claim's code is wrong, used, expired or past its wrong tries — or there is no such
    /// claim: one answer for all, so a claim id alone says nothing.
    public static let invalidPhoneCode = AuthError(.invalidInput, code: .invalidPhoneCode,
        message: "The code is wrong, used or expired, or the claim took too many wrong codes; ask for a new SMS.")
    /// The account has no live session with this id (another account's is no different).
    public static let sessionNotFound = AuthError(.notFound, code: .sessionNotFound, message: "This account has no such session.")
    /// The signed-in account has no phone claim with this id.
    public static let phoneClaimNotFound = AuthError(.notFound, code: .phoneClaimNotFound, message: "This account has no such phone claim.")
    /// The phone claim is not in the state this needs; `message` says which.
    public static func phoneClaimState(_ message: String) -> AuthError {
        AuthError(.conflict, code: .phoneClaimState, message: message)
    }
    /// Sign-in by phone is off (`--phone-sign-in`).
    public static let phoneSignInDisabled = AuthError(.notFound, code: .phoneSignInDisabled,
        message: "Sign-in by phone is not enabled on this server (--phone-sign-in).")
    /// Only a dead outbox message can be retried.
    public static let outboxMessageNotFound = AuthError(.notFound, code: .notFound, message: "There is no such message.")
    public static let webhookNotFound = AuthError(.notFound, code: .notFound, message: "There is no such webhook endpoint.")
    public static let oidcClientNotFound = AuthError(.notFound, code: .notFound, message: "There is no such OpenID Connect client.")
    public static let suppressionNotFound = AuthError(.notFound, code: .notFound, message: "That address is not suppressed.")
    public static let notDead = AuthError(.conflict, code: .notDead, message: "Only a dead message can be retried.")
}
