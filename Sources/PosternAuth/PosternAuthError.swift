import Foundation
import PosternAPI

/// What went wrong, as an app handles it: one case per error code of the API (see
/// `APIErrorCode`), and the failures that happen before an answer arrives. `errorDescription`
/// is a sentence a developer can show; it never contains a code, token or password.
public enum PosternAuthError: Error, Sendable, Hashable, LocalizedError {
    // The caller's input.
    /// A field is missing or malformed; the message names it (`INVALID_ARGUMENT`).
    case invalidArgument(String)
    /// The address is not one the server accepts (`INVALID_EMAIL`).
    case invalidEmail
    /// The link or 6-digit code is wrong, already used, or for another action (`INVALID_OOB_CODE`).
    case invalidCode
    /// The link or code has expired: ask for a new one (`EXPIRED_OOB_CODE`).
    case expiredCode
    /// The link was already used (`LINK_USED`); `signedInHere` when this device is the one that
    /// completed it: the user is already signed in here.
    case linkUsed(signedInHere: Bool)
    /// A newer link for the same address was used, which ended this one: ask for a new one if
    /// needed (`LINK_SUPERSEDED`).
    case linkSuperseded
    /// The link is bound to the browser that asked for it: open it there, or type the 6-digit
    /// code from the mail there (`LINK_OTHER_BROWSER`).
    case linkOtherBrowser
    /// The address typed is not the one the link was sent to (`EMAIL_MISMATCH`).
    case emailMismatch
    /// The link was asked for on another device: type the 6-digit code from the mail instead
    /// (`INVALID_CODE_VERIFIER`).
    case invalidCodeVerifier
    /// The continue URL's host is not allowed by the server (`INVALID_CONTINUE_URI`).
    case invalidContinueURL
    /// The password breaks the server's policy; `rule` names the rule (`WEAK_PASSWORD`).
    case weakPassword(rule: String?, message: String)
    /// The address or the password is wrong (`INVALID_LOGIN_CREDENTIALS`).
    case invalidLoginCredentials
    /// The account is disabled (`USER_DISABLED`).
    case userDisabled
    /// The service's operator refused this sign-in or sign-up (`HOOK_DENIED`): `message` is theirs
    /// for the person, plain text (HTML-escape it where it is shown as HTML).
    case signInRefused(message: String)
    /// The service's operator checks each sign-in and that check did not answer; try again shortly
    /// (`HOOK_FAILED`).
    case signInCheckFailed
    /// The phone number is not one the server accepts (`INVALID_PHONE_NUMBER`).
    case invalidPhoneNumber
    /// The server sends no SMS to that number's country (`SMS_COUNTRY_NOT_ALLOWED`).
    case smsCountryNotAllowed
    // The session.
    /// The stored refresh token is unknown or expired: sign in again (`INVALID_REFRESH_TOKEN`).
    case invalidRefreshToken
    /// The session was revoked (a password change or reset, or a stolen token): the client has
    /// signed out (`TOKEN_REVOKED`).
    case tokenRevoked
    /// The ID token was refused (`INVALID_ID_TOKEN`).
    case invalidIDToken
    /// The action needs a fresh sign-in: call `confirmAuthentication(with:)` first
    /// (`REQUIRES_RECENT_LOGIN`).
    case requiresRecentLogin
    /// There is no signed-in user on this device.
    case notSignedIn
    /// The action needs an account with an address; this one is anonymous: sign in or link an
    /// address first (`ANONYMOUS_ACCOUNT`).
    case anonymousAccount
    // Account resolution.
    /// The credential's address has an account and the anonymous account on this device would be
    /// replaced: ask the user, then call `login` again with `allowMigration` true or false
    /// (`MIGRATION_REQUIRED`).
    case migrationRequired(MigrationRequired)
    /// The credential's address belongs to another account (`CREDENTIAL_ALREADY_IN_USE`).
    case credentialAlreadyInUse
    /// The link would change the signed-in account (give it the link's address, or move this
    /// guest account's data), but it was not asked for from this session: someone else's link,
    /// perhaps forwarded. Ask for a link from here, or sign out to sign in with it
    /// (`LINK_OTHER_SESSION`).
    case linkOtherSession
    /// The new address already belongs to another account (`EMAIL_EXISTS`).
    case emailExists
    /// No such user (`USER_NOT_FOUND`).
    case userNotFound
    /// The text holds an action link, but not a sign-in link; `mode` says which.
    case notASignInLink(mode: String)
    /// The text holds no action link this server made.
    case noLinkFound
    /// The task waiting for an approval, or solving a challenge, was cancelled.
    case cancelled
    // Phone numbers.
    /// The SMS code is wrong, used or expired, or the claim took too many wrong codes: ask for a
    /// new SMS (`INVALID_PHONE_CODE`).
    case invalidPhoneCode
    /// The account has no such phone claim (`PHONE_CLAIM_NOT_FOUND`).
    case phoneClaimNotFound
    /// The account has no such session (`SESSION_NOT_FOUND`).
    case sessionNotFound
    /// The phone claim is not in the state the action needs; the message says which
    /// (`PHONE_CLAIM_STATE`).
    case phoneClaimState(String)
    /// The server does not offer sign-in by phone (`PHONE_SIGN_IN_DISABLED`).
    case phoneSignInDisabled
    /// This server does not let this sign-in create an account: sign-ups are closed, by
    /// invitation only, or limited to some domains (`SIGN_UP_NOT_ALLOWED`).
    case signUpNotAllowed
    // Identity providers (Sign in with Apple, Google, …).
    /// The provider's ID token was refused: expired, for another app, used before, or its nonce
    /// does not match (`INVALID_PROVIDER_TOKEN`). Ask the provider for a new one.
    case invalidProviderToken
    /// The server has no such provider configured (`PROVIDER_NOT_CONFIGURED`).
    case providerNotConfigured
    /// The provider's address has an account that this identity may not join yet: sign in by
    /// email link, then link the provider (`ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL`).
    case accountExistsWithDifferentCredential
    /// The account has an identity of this provider already (`PROVIDER_ALREADY_LINKED`).
    case providerAlreadyLinked
    /// The account has no identity of this provider (`PROVIDER_NOT_LINKED`).
    case providerNotLinked
    /// It is the account's last way to sign in (`LAST_SIGN_IN_METHOD`).
    case lastSignInMethod
    // Limits.
    /// The server asks for a solved challenge before it sends mail or SMS (`CHALLENGE_REQUIRED`):
    /// `kind` is `altcha` (the built-in proof of work: fetch it with `challenge()`, solve it) or the
    /// CAPTCHA service whose widget, with `siteKey`, the app must show.
    case challengeRequired(kind: String, siteKey: String?)
    /// Too many attempts; try again after `retryAfter` seconds (`TOO_MANY_ATTEMPTS_TRY_LATER`).
    case tooManyAttempts(retryAfter: Int?)
    // The server and the network.
    /// The server's database is down; try again shortly (`UNAVAILABLE`).
    case unavailable
    /// A fault inside the server; it has been logged there (`INTERNAL`).
    case internalFailure
    /// The server could not be reached or the connection broke; `reason` is the system's words.
    case network(reason: String)
    /// The client and the server disagree about the contract: the answer could not be read, or
    /// the server refused the request's shape (`BAD_REQUEST`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`,
    /// `PAYLOAD_TOO_LARGE`, `UNSUPPORTED_MEDIA_TYPE`, or a code this build does not know).
    case protocolMismatch(status: Int, code: String, message: String)
    /// An operator-only answer reached the client (`UNAUTHORIZED`, `NOT_DEAD`): the client does
    /// not call the admin API, so this is a misconfigured base URL or proxy.
    case operatorOnly(code: String, message: String)

    /// The credentials and the anonymous account of a `migrationRequired` answer.
    public struct MigrationRequired: Sendable, Hashable {
        /// What the user signed in with; pass it to `login` again.
        public let credentials: Credentials
        /// The anonymous account that would be replaced: the app moves its data from here.
        public let anonymousUid: String
    }

    /// The error an API answer carries.
    /// - Parameters:
    ///   - status: the HTTP status; `detail` the error object; `credentials` what a login sent
    ///     (for `MIGRATION_REQUIRED`); `retryAfter` the `Retry-After` header.
    public static func from(
        status: Int, detail: ErrorBody.Detail, credentials: Credentials? = nil, retryAfter: Int? = nil
    ) -> PosternAuthError {
        guard let code = detail.knownCode else {
            return .protocolMismatch(status: status, code: detail.code, message: detail.message)
        }
        // Exhaustive over the catalogue: a new server code does not compile until it is mapped.
        switch code {
        case .invalidArgument: return .invalidArgument(detail.message)
        case .challengeRequired: return .challengeRequired(kind: detail.challenge ?? "altcha", siteKey: detail.siteKey)
        case .invalidEmail: return .invalidEmail
        case .invalidOOBCode: return .invalidCode
        case .expiredOOBCode: return .expiredCode
        case .linkUsed: return .linkUsed(signedInHere: detail.signedInHere == "true")
        case .linkSuperseded: return .linkSuperseded
        case .linkOtherBrowser: return .linkOtherBrowser
        case .emailMismatch: return .emailMismatch
        case .invalidCodeVerifier: return .invalidCodeVerifier
        case .invalidContinueURI: return .invalidContinueURL
        case .weakPassword: return .weakPassword(rule: detail.rule, message: detail.message)
        case .invalidLoginCredentials: return .invalidLoginCredentials
        case .userDisabled: return .userDisabled
        case .invalidPhoneNumber: return .invalidPhoneNumber
        case .smsCountryNotAllowed: return .smsCountryNotAllowed
        case .invalidRefreshToken: return .invalidRefreshToken
        case .tokenRevoked: return .tokenRevoked
        case .invalidIDToken: return .invalidIDToken
        case .requiresRecentLogin: return .requiresRecentLogin
        case .migrationRequired:
            guard let credentials, let anonymousUid = detail.anonymousUid else {
                return .protocolMismatch(status: status, code: detail.code, message: detail.message)
            }
            return .migrationRequired(MigrationRequired(credentials: credentials, anonymousUid: anonymousUid))
        case .credentialAlreadyInUse: return .credentialAlreadyInUse
        case .linkOtherSession: return .linkOtherSession
        case .emailExists: return .emailExists
        case .userNotFound: return .userNotFound
        case .anonymousAccount: return .anonymousAccount
        case .invalidPhoneCode: return .invalidPhoneCode
        case .phoneClaimNotFound: return .phoneClaimNotFound
        case .sessionNotFound: return .sessionNotFound
        case .phoneClaimState: return .phoneClaimState(detail.message)
        case .phoneSignInDisabled: return .phoneSignInDisabled
        case .signUpNotAllowed: return .signUpNotAllowed
        case .invalidProviderToken: return .invalidProviderToken
        case .providerNotConfigured: return .providerNotConfigured
        case .accountExistsWithDifferentCredential: return .accountExistsWithDifferentCredential
        case .providerAlreadyLinked: return .providerAlreadyLinked
        case .providerNotLinked: return .providerNotLinked
        case .lastSignInMethod: return .lastSignInMethod
        case .tooManyAttempts: return .tooManyAttempts(retryAfter: retryAfter)
        case .unavailable: return .unavailable
        case .hookFailed: return .signInCheckFailed
        case .hookDenied: return .signInRefused(message: detail.message)
        case .internalFailure: return .internalFailure
        case .badRequest, .notFound, .methodNotAllowed, .payloadTooLarge, .unsupportedMediaType:
            return .protocolMismatch(status: status, code: detail.code, message: detail.message)
        case .unauthorized, .notDead:
            return .operatorOnly(code: detail.code, message: detail.message)
        }
    }

    public var errorDescription: String? {
        switch self {
        case .invalidArgument(let message): "The request was refused: \(message)"
        case .challengeRequired(let kind, _): "The service asks for a solved challenge (\(kind)) before it sends this."
        case .invalidEmail: "That is not an email address the service accepts."
        case .invalidCode: "This link or code is not valid any more. Ask for a new one."
        case .expiredCode: "This link or code has expired. Ask for a new one."
        case .linkUsed(let signedInHere):
            signedInHere ? "You are already signed in: this link was used on this device." : "This link was already used. Ask for a new one if you need to."
        case .linkSuperseded: "A newer link for this address was used, so this one no longer works. Ask for a new one if you need to."
        case .linkOtherBrowser: "This link was asked for in another browser: open it there, or type the 6-digit code from the mail there."
        case .emailMismatch: "The address typed is not the one the link was sent to."
        case .invalidCodeVerifier: "This link was asked for on another device: type the 6-digit code from the mail instead."
        case .invalidContinueURL: "The continue URL points to a host the service does not allow."
        case .weakPassword(_, let message): "The password is too weak: \(message)"
        case .invalidLoginCredentials: "The address or the password is wrong."
        case .userDisabled: "This account is disabled."
        case .signInRefused(let message): message
        case .signInCheckFailed: "The sign-in cannot be completed right now. Try again shortly."
        case .invalidPhoneNumber: "That is not a phone number the service accepts: give it with + and the country code."
        case .smsCountryNotAllowed: "The service does not send text messages to that country."
        case .invalidRefreshToken: "The session has expired. Sign in again."
        case .tokenRevoked: "The session was ended on the server. Sign in again."
        case .invalidIDToken: "The session was refused by the server. Sign in again."
        case .requiresRecentLogin: "For this, confirm who you are by signing in again."
        case .notSignedIn: "Nobody is signed in on this device."
        case .anonymousAccount: "A guest account cannot do this: sign in with an email address first."
        case .migrationRequired: "This address already has an account; signing in replaces the guest account on this device."
        case .credentialAlreadyInUse: "This address belongs to another account."
        case .linkOtherSession: "This link was not asked for from this account, so it cannot change it. Ask for a new link here, or sign out to sign in with this one."
        case .emailExists: "The new address already belongs to another account."
        case .userNotFound: "There is no such user."
        case .notASignInLink(let mode): "This is a \(mode) link, not a sign-in link."
        case .noLinkFound: "No sign-in link was found in that text."
        case .cancelled: "The operation was cancelled."
        case .invalidPhoneCode: "This code is not valid any more. Ask for a new SMS."
        case .phoneClaimNotFound: "This account has no such phone number request."
        case .sessionNotFound: "This account has no such session."
        case .phoneClaimState(let message): "The phone number cannot do this now: \(message)"
        case .phoneSignInDisabled: "This service does not offer sign-in by phone."
        case .signUpNotAllowed: "This service does not create new accounts here: sign-ups are closed, by invitation only, or limited to some domains."
        case .invalidProviderToken: "The sign-in was refused. Try signing in again."
        case .providerNotConfigured: "This service does not offer sign-in with that provider."
        case .accountExistsWithDifferentCredential:
            "An account with this address exists already. Sign in with the email link first, then add this sign-in method in your account."
        case .providerAlreadyLinked: "This account already has a sign-in with that provider."
        case .providerNotLinked: "This account has no sign-in with that provider."
        case .lastSignInMethod: "This is the account's last way to sign in, so it cannot be removed."
        case .tooManyAttempts(let retryAfter):
            retryAfter.map { "Too many attempts. Try again in \($0) seconds." } ?? "Too many attempts. Try again later."
        case .unavailable: "The service is unavailable just now. Try again shortly."
        case .internalFailure: "Something went wrong on the server."
        case .network(let reason): "The service could not be reached: \(reason)"
        case .protocolMismatch(let status, let code, _): "The app and the service disagree about the API (HTTP \(status), \(code))."
        case .operatorOnly(let code, _): "The service answered as if to an operator (\(code)); check the app's server URL."
        }
    }
}
