import Foundation
import PosternAPI

extension PosternAuth {
    // MARK: Identity providers (Sign in with Apple, Google, other OpenID providers)

    /// Adds an identity provider's sign-in to the signed-in account (RxFireAuth's linking of
    /// Apple or Google): afterwards `login(with:)` with that provider lands in this account.
    /// Needs a recent sign-in (`confirmAuthentication(with:)`). The user is reloaded from the
    /// answer: `user.providers` names the provider.
    /// - Throws: `.invalidArgument` for credentials that are not a provider's token (`.apple`,
    ///   `.google`, `.provider`); `.notSignedIn`; `.requiresRecentLogin`;
    ///   `.credentialAlreadyInUse` (the identity belongs to another account);
    ///   `.providerAlreadyLinked` (the account has one of this provider already);
    ///   `.invalidProviderToken`, `.providerNotConfigured`, network and server failures.
    @discardableResult
    public func link(with credentials: Credentials) async throws(PosternAuthError) -> User {
        guard let presented = credentials.providerToken else {
            throw .invalidArgument("Only an identity provider's token (.apple, .google, .provider) can be linked; an address signs in with login(with:).")
        }
        let body = LinkProviderBody(provider: presented.provider, providerIdToken: presented.idToken, nonce: presented.nonce)
        let user = User(try await authorized("POST", "/v1/me/providers", body: body, as: UserBody.self))
        setUser(user)
        return user
    }

    /// Removes the provider's sign-in from the signed-in account. Needs a recent sign-in.
    /// - Parameter provider: as `user.providers` names it: `apple`, `google`, `oidc:<id>`.
    /// - Throws: `.invalidArgument` for a name that is no provider's; `.notSignedIn`;
    ///   `.requiresRecentLogin`; `.providerNotLinked`; `.lastSignInMethod` (no other way into
    ///   the account would be left); network and server failures.
    @discardableResult
    public func unlink(provider: String) async throws(PosternAuthError) -> User {
        guard Self.isProviderName(provider) else { throw .invalidArgument("\"\(provider)\" is not an identity provider's name.") }
        let user = User(try await authorized("DELETE", "/v1/me/providers/\(provider)", body: Optional<EmptyBody>.none, as: UserBody.self))
        setUser(user)
        return user
    }

    /// Whether `name` is a provider's name as the API spells it (`^(oidc:)?[a-z0-9_-]{1,32}$`):
    /// nothing else goes into the path.
    static func isProviderName(_ name: String) -> Bool {
        let id = name.hasPrefix("oidc:") ? name.dropFirst(5) : Substring(name)
        return (1...32).contains(id.count) && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
