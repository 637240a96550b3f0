import Foundation
import PosternAPI
import PosternCrypto

/// "Continue with Apple / Google / …" on the hosted sign-in page (issue 46 point 3, docs/providers.md
/// "The web flow"): the authorization code flow to the provider, with PKCE, state and nonce, then
/// the provider sign-in's rules with no presented session.
extension OIDCFlow {
    /// The provider's redirect URI: the one to register at every provider.
    public var providerCallbackURL: String { issuer + OIDCDiscovery.Path.providerCallback }

    /// The PKCE verifier and the nonce of the web flow for request `id` in `browser`: HMACs of
    /// both under the action-code key, so nothing secret is stored and only the browser that
    /// started can finish.
    func providerSecrets(request id: String, browser: String) -> (verifier: String, nonce: String) {
        let mac = context.keys.current.actionCodes.activeMAC
        let verifier = Base64URL.encode(mac.authenticate(Array("postern-provider-verifier|\(id)|\(browser)".utf8)))
        let nonce = Base64URL.encode(mac.authenticate(Array("postern-provider-nonce|\(id)|\(browser)".utf8)))
        return (verifier, nonce)
    }

    /// The button for `provider` was pressed on request `id`'s page: the redirect to the provider.
    /// - Throws: `AuthError` for the store; a provider that cannot be reached is a page saying so.
    public func startProvider(request id: String, browser: String?, provider name: String) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in
            guard let browser, let provider = providerSignIn.registry.provider(named: name), provider.clientID != nil else {
                return .refused(.form)
            }
            let secrets = providerSecrets(request: id, browser: browser)
            do {
                return .redirect(try providerSignIn.registry.authorizationURL(
                    provider: provider, redirectURI: providerCallbackURL, state: "\(id).\(provider.id)",
                    nonce: ProviderTokenVerifier.expectedNonceClaim(secrets.nonce, provider: provider),
                    codeChallenge: FlowContext.s256Challenge(of: secrets.verifier)))
            } catch {
                context.logger?.warning("identity provider unavailable", ["provider": provider.id, "detail": "\(error)"])
                return .signIn(found.view, retry: .providerFailed)
            }
        }
    }

    /// The provider sent the browser back (`state`, and `code` or `error`): the code redeemed, its
    /// ID token checked, the six cases with no presented session, and the request completed.
    /// `appleUser`: the `user` field of Apple's first form_post (`{"name": {"firstName", "lastName"}}`),
    /// which is not signed: it only names an account that has no display name.
    /// - Throws: `AuthError` for the store.
    public func finishProvider(
        state: String, code: String?, error: String?, browser: String?, session: String?, appleUser: String? = nil
    ) throws(AuthError) -> OIDCPageAnswer {
        let parts = state.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return OIDCPageAnswer(.refused(.requestExpired)) }
        return try signInStep(parts[0], browser: browser) { found throws(AuthError) in
            guard let browser, let provider = providerSignIn.registry.provider(named: parts[1]), provider.clientID != nil else {
                return OIDCPageAnswer(.refused(.form))
            }
            // The person cancelled at the provider, or it refused: the sign-in page again.
            guard error == nil, let code, !code.isEmpty else { return OIDCPageAnswer(.signIn(found.view, retry: .providerFailed)) }
            let secrets = providerSecrets(request: found.record.id, browser: browser)
            let outcome: ProviderSignInFlow.Outcome
            do throws(AuthError) {
                let token: String
                do {
                    token = try providerSignIn.registry.redeem(
                        code: code, codeVerifier: secrets.verifier, redirectURI: providerCallbackURL, provider: provider)
                } catch {
                    throw AuthError.invalidProviderToken("\(provider.id): the code was not redeemed (\(error))")
                }
                let identity = try providerSignIn.check(token, provider: provider, nonce: secrets.nonce)
                let name = provider.kind == .apple ? appleUser.flatMap(Self.appleDisplayName) : nil
                outcome = try providerSignIn.resolve(
                    identity, token: token, provider: provider, presented: nil, allowMigration: nil, displayName: name, issue: nil)
            } catch where error.code == APIErrorCode.accountExistsWithDifferentCredential.rawValue {
                return OIDCPageAnswer(.signIn(found.view, retry: .accountExists))
            } catch where error.code == APIErrorCode.userDisabled.rawValue || error.kind == .invalidInput || error.kind == .unavailable
                || error.kind == .forbidden
            {
                context.logRefusal(error)
                return OIDCPageAnswer(.signIn(found.view, retry: .providerFailed))
            }
            return try signedIn(found, uid: outcome.account.uid, email: outcome.account.email?.address, method: .fed, apiRefreshToken: nil, replacing: session)
        }
    }

    /// The display name in Apple's `user` form field: the first and last name, one line, within
    /// the display name's limit; nil when it holds none.
    public static func appleDisplayName(_ json: String) -> String? {
        guard json.utf8.count <= 4096, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let name = object["name"] as? [String: Any]
        else { return nil }
        let parts = [name["firstName"], name["lastName"]].compactMap { ($0 as? String)?.trimmingCharacters(in: .whitespaces) }
        let joined = parts.filter { !$0.isEmpty }.joined(separator: " ")
        let clean = String(String.UnicodeScalarView(joined.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
        let cut = String(String.UnicodeScalarView(clean.unicodeScalars.prefix(WireLimits.displayNameMaximumLength)))
        guard !cut.isEmpty, (try? ProfileFlow.checkDisplayName(cut)) != nil else { return nil }
        return cut
    }
}
