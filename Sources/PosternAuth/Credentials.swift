import Foundation
import PosternAPI

/// What a user signs in with.
public enum Credentials: Sendable, Hashable {
    /// A sign-in link: the URL the app was opened with, or any text the user pasted (a whole
    /// mail, a link a security gateway rewrote). `email`, when given, must be the address the
    /// link was sent to. A link asked for on another device does not complete here (PKCE): the
    /// user types the 6-digit code instead.
    case emailLink(String, email: String? = nil)
    /// The 6-digit code from the mail, with the address it was sent to.
    case emailCode(email: String, code: String)
    /// An address and its password.
    case password(email: String, password: String)
    /// The approval this device asked for with `requestApproval(for:)`: signing in with it waits
    /// (long polls of at most 25 s) until the owner picks the right number on the link's page,
    /// and ends with `.invalidCode` when a wrong number cancelled it or it expired.
    case approval(email: String)
    /// The 6-digit code from the SMS `sendPhoneSignInCode(to:)` asked for, with the number it went
    /// to (only on a server with `--phone-sign-in`).
    case phoneCode(phoneNumber: String, code: String)
    /// Sign in with Apple: the `identityToken` of the `ASAuthorizationAppleIDCredential`, the raw
    /// nonce whose SHA-256 went into the request (`SignInNonce`), and the name Apple gives the app
    /// only on the first sign-in: when given, it becomes the display name of an account that has
    /// none (RxFireAuth's `updateUserDisplayName`).
    case apple(idToken: String, rawNonce: String, fullName: PersonNameComponents?)
    /// Sign in with Google: the `idToken` of the signed-in `GIDGoogleUser`.
    case google(idToken: String)
    /// Another OpenID provider of the server's `--identity-providers`: its `id` (`acme` or
    /// `oidc:acme`), the ID token it gave the app, and the nonce the app put in its request, when
    /// it put one (compared as it is).
    case provider(_ id: String, idToken: String, nonce: String? = nil)

    /// The address these credentials name, when they name one.
    var email: String? {
        switch self {
        case .emailLink(_, let email): email
        case .emailCode(let email, _), .password(let email, _), .approval(let email): email
        case .phoneCode, .apple, .google, .provider: nil
        }
    }

    /// What the provider endpoints take from an identity provider's credentials: the provider's
    /// id, its token, the nonce and the display name; nil for the other credentials.
    var providerToken: (provider: String, idToken: String, nonce: String?, displayName: String?)? {
        switch self {
        case .apple(let idToken, let rawNonce, let fullName):
            ("apple", idToken, rawNonce, fullName.flatMap(Self.displayName(of:)))
        case .google(let idToken): ("google", idToken, nil, nil)
        case .provider(let id, let idToken, let nonce): (id, idToken, nonce, nil)
        case .emailLink, .emailCode, .password, .approval, .phoneCode: nil
        }
    }

    /// The name as the user would write it; nil when it has no part (Apple sends empty
    /// components after the first sign-in).
    static func displayName(of name: PersonNameComponents) -> String? {
        #if canImport(Darwin)
        let formatted = PersonNameComponentsFormatter.localizedString(from: name, style: .default)
        #else
        let formatted = [name.namePrefix, name.givenName, name.middleName, name.familyName, name.nameSuffix]
            .compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }.joined(separator: " ")
        #endif
        // The server refuses a longer name, and with it the sign-in: a name is not worth that.
        let trimmed = formatted.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.prefix(WireLimits.displayNameMaximumLength)
        return trimmed.isEmpty ? nil : String(String.UnicodeScalarView(trimmed))
    }
}

/// What a completed sign-in says, as RxFireAuth's `LoginDescriptor` does.
public struct LoginDescriptor: Sendable, Hashable {
    /// The account now signed in.
    public let uid: String
    /// Its address.
    public let email: String?
    /// True exactly when the address had no account before: show onboarding (ask for a name).
    public let isNewUser: Bool
    /// Whether the anonymous account was replaced: nil when no anonymous account was involved,
    /// true when its data should move from `oldUserId` to `newUserId`, false when the user chose
    /// not to migrate.
    public let allowMigration: Bool?
    /// The anonymous account that was signed in before, when there was one.
    public let oldUserId: String?
    /// The account signed in now (the same as `uid`).
    public let newUserId: String
}

/// A sign-in waiting for approval on another device: show `number` until it completes.
public struct PendingApproval: Sendable, Hashable {
    /// The address the link went to.
    public let email: String
    /// The 2-digit number to show; the owner picks it on the link's page.
    public let number: Int
}

/// Where FUAP's welcome screen goes after `welcome(email:)`, decided only from what this device
/// knows (the server never says whether an address has an account).
public enum WelcomeRoute: Sendable, Hashable {
    /// A link and a code are on their way: show "check your mail" and a field for the code.
    case linkSent(email: String)
    /// A link and a code are on their way, and a password was set for this address on this
    /// device: offer the password field too.
    case linkSentOrPassword(email: String)
}
