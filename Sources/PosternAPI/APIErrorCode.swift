/// The error catalogue: every `code` an answer of the API can carry in
/// `{"error": {"code", "message"}}`. The server builds its errors from these cases only, so a
/// client that handles every case handles every answer; a code added later still decodes
/// (`ErrorBody.Detail.code` stays a string), as `APIErrorCode(rawValue:)` == nil.
public enum APIErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// A field is missing, malformed or of the wrong type; the message names it (400).
    case invalidArgument = "INVALID_ARGUMENT"
    /// The request is not well-formed HTTP (conflicting framing headers) (400).
    case badRequest = "BAD_REQUEST"
    /// The address is not one Postern accepts (400).
    case invalidEmail = "INVALID_EMAIL"
    /// The phone number is not one Postern accepts: not E.164 (or national with a default region),
    /// not a number its country's numbering plan assigns, or not a mobile's (premium rate, shared
    /// cost, toll free, a fixed line…) (400).
    case invalidPhoneNumber = "INVALID_PHONE_NUMBER"
    /// SMS is not sent to this number's country: the region whose numbering plan holds it, not its
    /// calling code (`--sms-countries`; +1 876 is Jamaica, not the United States) (400).
    case smsCountryNotAllowed = "SMS_COUNTRY_NOT_ALLOWED"
    /// The link or code is wrong, used, or for another action (400).
    case invalidOOBCode = "INVALID_OOB_CODE"
    /// The link or code has expired (400).
    case expiredOOBCode = "EXPIRED_OOB_CODE"
    /// The link (a genuine one: its signature is valid) was already used; `signedInHere` is
    /// `"true"` when the browser or device presenting it is the one that completed it (400).
    case linkUsed = "LINK_USED"
    /// The link (a genuine one) was ended unused because a newer link of the same kind for the
    /// same address was used (400).
    case linkSuperseded = "LINK_SUPERSEDED"
    /// The link (a genuine one) is bound to the browser that asked for it (`bindBrowser`) and was
    /// opened in another: open it there, or type the 6-digit code (400).
    case linkOtherBrowser = "LINK_OTHER_BROWSER"
    /// The link would give its address to the signed-in account, or the signed-in anonymous
    /// account's data to the address's account, but this session did not ask for it: ask for the
    /// link from this session (send-link with its `idToken`), or complete it without one (409).
    case linkOtherSession = "LINK_OTHER_SESSION"
    /// The address given is not the one the link was sent to (400).
    case emailMismatch = "EMAIL_MISMATCH"
    /// The link was requested with PKCE and the verifier is missing or wrong (400).
    case invalidCodeVerifier = "INVALID_CODE_VERIFIER"
    /// The `continueUrl` points to a host that is not allowed (400).
    case invalidContinueURI = "INVALID_CONTINUE_URI"
    /// The password breaks the policy; `rule` says which rule (400).
    case weakPassword = "WEAK_PASSWORD"
    /// Unknown address, wrong password or no password: one answer for all three (400).
    case invalidLoginCredentials = "INVALID_LOGIN_CREDENTIALS"
    /// The account is disabled (400).
    case userDisabled = "USER_DISABLED"
    /// The refresh token is unknown or expired (400).
    case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
    /// A rotated-out refresh token was presented: the whole family is revoked (401).
    case tokenRevoked = "TOKEN_REVOKED"
    /// The ID token is missing, malformed, expired or revoked (401).
    case invalidIDToken = "INVALID_ID_TOKEN"
    /// The action needs a sign-in within the last 5 minutes (401).
    case requiresRecentLogin = "REQUIRES_RECENT_LOGIN"
    /// The admin token is missing or wrong; or, on a `/v1/delivery-events/` route, the provider's
    /// proof (its signature, credentials, topic or certificate URL) is, or the event is a replay (401).
    case unauthorized = "UNAUTHORIZED"
    /// No such endpoint, or the admin API is off (404).
    case notFound = "NOT_FOUND"
    /// No such user (404).
    case userNotFound = "USER_NOT_FOUND"
    /// The path exists but not with this method; `Allow` lists the methods (405).
    case methodNotAllowed = "METHOD_NOT_ALLOWED"
    /// The credential's address has an account and an anonymous session would be replaced;
    /// `anonymousUid` names it (409).
    case migrationRequired = "MIGRATION_REQUIRED"
    /// The credential's address belongs to another account (409).
    case credentialAlreadyInUse = "CREDENTIAL_ALREADY_IN_USE"
    /// The new address already belongs to another account (409).
    case emailExists = "EMAIL_EXISTS"
    /// Only a dead outbox message can be retried (409).
    case notDead = "NOT_DEAD"
    /// The account is anonymous and has no address for this yet: sign in with an address, or sign
    /// up with its idToken (409).
    case anonymousAccount = "ANONYMOUS_ACCOUNT"
    /// A phone claim's code is wrong, used or expired, the claim took too many wrong codes, or
    /// there is no such claim: one answer for all (400).
    case invalidPhoneCode = "INVALID_PHONE_CODE"
    /// The signed-in account has no phone claim with this id (404).
    case phoneClaimNotFound = "PHONE_CLAIM_NOT_FOUND"
    /// The account has no live session with this id (another account's is no different) (404).
    case sessionNotFound = "SESSION_NOT_FOUND"
    /// The phone claim is not in the state the request needs (409).
    case phoneClaimState = "PHONE_CLAIM_STATE"
    /// Sign-in by phone is off on this server (`--phone-sign-in`) (404).
    case phoneSignInDisabled = "PHONE_SIGN_IN_DISABLED"
    /// An identity provider's ID token was refused: forged, expired, for another app, of another
    /// issuer, used before, or its nonce does not match; one answer for all (400).
    case invalidProviderToken = "INVALID_PROVIDER_TOKEN"
    /// No identity provider of that name is configured (`--identity-providers`) (404).
    case providerNotConfigured = "PROVIDER_NOT_CONFIGURED"
    /// The provider's address has an account this identity may not join yet (the provider or the
    /// account has not verified the address): sign in by link, then link the provider (409).
    case accountExistsWithDifferentCredential = "ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL"
    /// The account holds an identity of this provider already: unlink it first (409).
    case providerAlreadyLinked = "PROVIDER_ALREADY_LINKED"
    /// The account has no identity of this provider (404).
    case providerNotLinked = "PROVIDER_NOT_LINKED"
    /// Removing it would leave the account no way to sign in (409).
    case lastSignInMethod = "LAST_SIGN_IN_METHOD"
    /// This server does not let this sign-in create an account (`--sign-up`, `--sign-up-domains`):
    /// an anonymous sign-in, or a new account after the person proved the credential (a link or
    /// code from the mailbox, a phone code, a provider's verified address). Never the answer of a
    /// request that only names an address (403).
    case signUpNotAllowed = "SIGN_UP_NOT_ALLOWED"
    /// This request needs a solved challenge first (`--challenge`): `challenge` names what to solve
    /// (`altcha`, the built-in proof of work, or the CAPTCHA service), `challengeUrl` where to get
    /// one; send the solution in the request's `challengeSolution` field. The same for every address (400).
    case challengeRequired = "CHALLENGE_REQUIRED"
    /// The body is larger than 64 KiB (413).
    case payloadTooLarge = "PAYLOAD_TOO_LARGE"
    /// A body was sent with a content type other than JSON (415).
    case unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
    /// Too many attempts; `Retry-After` says when to try again (429).
    case tooManyAttempts = "TOO_MANY_ATTEMPTS_TRY_LATER"
    /// The operator's before-sign-up or before-sign-in hook refused; `message` is the hook's words
    /// for the person when it gave some (plain text, at most 200 characters), else "The sign-in
    /// was refused." (403).
    case hookDenied = "HOOK_DENIED"
    /// The operator's hook did not answer usably in time and the server refuses sign-ins then
    /// (`--hook-failure closed`); try again shortly (503).
    case hookFailed = "HOOK_FAILED"
    /// A fault inside the service (500).
    case internalFailure = "INTERNAL"
    /// A dependency (the database) is down; try again shortly (503).
    case unavailable = "UNAVAILABLE"

    /// The HTTP status that carries this code (the one the catalogue states for it).
    public var httpStatus: Int {
        switch self {
        case .invalidArgument, .badRequest, .invalidEmail, .invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded,
            .linkOtherBrowser, .emailMismatch, .invalidCodeVerifier,
            .invalidContinueURI, .weakPassword, .invalidLoginCredentials, .userDisabled, .invalidRefreshToken, .invalidPhoneNumber,
            .invalidPhoneCode, .smsCountryNotAllowed, .invalidProviderToken, .challengeRequired:
            400
        case .tokenRevoked, .invalidIDToken, .requiresRecentLogin, .unauthorized: 401
        case .hookDenied: 403
        case .notFound, .userNotFound, .phoneClaimNotFound, .sessionNotFound, .phoneSignInDisabled, .providerNotConfigured,
            .providerNotLinked: 404
        case .signUpNotAllowed: 403
        case .methodNotAllowed: 405
        case .migrationRequired, .credentialAlreadyInUse, .linkOtherSession, .emailExists, .notDead, .anonymousAccount, .phoneClaimState,
            .accountExistsWithDifferentCredential, .providerAlreadyLinked, .lastSignInMethod: 409
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .tooManyAttempts: 429
        case .internalFailure: 500
        case .unavailable, .hookFailed: 503
        }
    }
}
