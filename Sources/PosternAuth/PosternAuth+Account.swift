import Foundation
import PosternAPI

extension PosternAuth {
    // MARK: Passwords

    /// Verify-first sign-up: mails `email` a link (an address with an account gets an "you
    /// already have an account" mail instead; the answer is the same). The account, with this
    /// password, exists when the link is completed with `handle(_:)`; a signed-in anonymous user
    /// keeps its uid.
    /// - Parameter challengeSolution: as for `sendSignInLink(to:continueURL:locale:challengeSolution:)`.
    /// - Throws: `.weakPassword`, `.invalidEmail`, `.tooManyAttempts`, `.challengeRequired`, network
    ///   and server failures.
    public func signUp(
        email: String, password: String, continueURL: URL? = nil, locale: String? = nil, challengeSolution: String? = nil
    ) async throws(PosternAuthError) {
        let pkce = PKCE.make()
        let token = state.session == nil ? nil : try? await idToken()
        try await solvingChallenge(challengeSolution) { solution throws(PosternAuthError) in
            try await transport.send(
                "POST", "/v1/password/sign-up",
                body: SignUpBody(
                    email: email, password: password, idToken: token, continueUrl: continueURL?.absoluteString, locale: locale,
                    codeChallenge: pkce?.challenge, challengeSolution: solution))
        }
        state.pendingLink = PendingLink(email: email, codeVerifier: pkce?.verifier)
        state.lastEmail = email
        state.passwordEmails.insert(email.lowercased())
        persist()
    }

    /// Mails a password-reset link to `email` (the same answer for every address).
    /// - Parameter challengeSolution: as for `sendSignInLink(to:continueURL:locale:challengeSolution:)`.
    /// - Throws: `.invalidEmail`, `.tooManyAttempts`, `.challengeRequired`, network and server failures.
    public func resetPassword(
        for email: String, continueURL: URL? = nil, locale: String? = nil, challengeSolution: String? = nil
    ) async throws(PosternAuthError) {
        try await solvingChallenge(challengeSolution) { solution throws(PosternAuthError) in
            try await transport.send(
                "POST", "/v1/password/reset",
                body: PasswordResetBody(email: email, continueUrl: continueURL?.absoluteString, locale: locale, challengeSolution: solution))
        }
    }

    /// Sets the new password of a reset link (the URL or pasted text). Every session of the
    /// account ends, this device's too.
    /// - Throws: `.invalidCode`, `.expiredCode`, `.weakPassword`, network and server failures.
    public func confirmPasswordReset(_ link: String, newPassword: String) async throws(PosternAuthError) {
        let applied = try await transport.send(
            "POST", "/v1/actions/apply", body: ActionBody(link: link, newPassword: newPassword), as: AppliedActionBody.self)
        state.passwordEmails.insert(applied.email.lowercased())
        if let session = state.session, session.email?.lowercased() == applied.email.lowercased() { endSession() } else { persist() }
    }

    /// Sets or changes the signed-in user's password. Needs a recent sign-in
    /// (`confirmAuthentication(with:)`); the other sessions end, this one goes on.
    /// - Throws: `.requiresRecentLogin`, `.weakPassword`, `.notSignedIn`, network and server failures.
    public func updatePassword(_ password: String) async throws(PosternAuthError) {
        adopt(try await authorized("POST", "/v1/me/password", body: NewPasswordBody(password: password), as: SessionBody.self))
        if let email = state.session?.email { state.passwordEmails.insert(email.lowercased()); persist() }
        try await reloadUser()
    }

    // MARK: The address

    /// Mails `newEmail` a link that changes the address when completed; the old address gets a
    /// link that undoes it. Needs a recent sign-in.
    /// - Throws: `.requiresRecentLogin`, `.invalidEmail`, `.emailExists`, network and server failures.
    public func updateEmail(_ newEmail: String, continueURL: URL? = nil) async throws(PosternAuthError) {
        _ = try await authorized(
            "POST", "/v1/me/email", body: ChangeEmailBody(newEmail: newEmail, continueUrl: continueURL?.absoluteString), as: AcceptedBody.self)
    }

    /// Mails the signed-in user a link that verifies the address.
    /// - Throws: `.notSignedIn`, network and server failures.
    public func sendEmailVerification(continueURL: URL? = nil) async throws(PosternAuthError) {
        _ = try await authorized("POST", "/v1/me/verify-email", body: VerifyEmailBody(continueUrl: continueURL?.absoluteString), as: AcceptedBody.self)
    }

    /// Says what an action link is (its mode, address, expiry) without using it.
    /// - Throws: `.noLinkFound`-like `.invalidCode`, `.expiredCode`, network and server failures.
    public func inspect(_ link: String) async throws(PosternAuthError) -> ActionInfoBody {
        try await transport.send("POST", "/v1/actions/inspect", body: ActionBody(link: link), as: ActionInfoBody.self)
    }

    /// Applies a verification, address-change or recovery link (the URL or pasted text), then
    /// reloads the user when one is signed in. Sign-in links go to `handle(_:)`, reset links to
    /// `confirmPasswordReset(_:newPassword:)`.
    /// - Throws: `.invalidCode`, `.expiredCode`, network and server failures.
    @discardableResult
    public func applyActionLink(_ link: String) async throws(PosternAuthError) -> AppliedActionBody {
        let applied = try await transport.send("POST", "/v1/actions/apply", body: ActionBody(link: link), as: AppliedActionBody.self)
        if state.session != nil { _ = try? await reloadUser() }
        return applied
    }

    // MARK: The profile

    /// Reads the signed-in user's profile from the server.
    /// - Throws: `.notSignedIn`, network and server failures.
    @discardableResult
    public func reloadUser() async throws(PosternAuthError) -> User {
        let user = User(try await authorized("GET", "/v1/me", body: Optional<EmptyBody>.none, as: UserBody.self))
        setUser(user)
        return user
    }

    /// Changes the display name (`.null` removes it) and the app's attributes (replaced whole;
    /// at most 4 KiB of JSON).
    /// - Throws: `.invalidArgument`, `.notSignedIn`, network and server failures.
    @discardableResult
    public func updateProfile(displayName: Patch<String> = .unchanged, attributes: [String: JSONValue]? = nil) async throws(PosternAuthError) -> User {
        let user = User(try await authorized(
            "PATCH", "/v1/me", body: ProfilePatchBody(displayName: displayName, attributes: attributes), as: UserBody.self))
        setUser(user)
        return user
    }

    /// Deletes the account and signs out. Needs a recent sign-in.
    /// - Throws: `.requiresRecentLogin`, `.notSignedIn`, network and server failures.
    public func deleteAccount() async throws(PosternAuthError) {
        _ = try await authorized("DELETE", "/v1/me", body: Optional<EmptyBody>.none, as: NoContent.self)
        endSession()
    }
}

/// The empty body of a 204 answer.
struct NoContent: Sendable, Decodable {
    init() {}
    init(from decoder: any Decoder) throws {}
}
