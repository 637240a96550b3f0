import Foundation
import PosternAPI
import PosternCrypto

/// What RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) comes to.
public enum OIDCLogoutOutcome: Sendable, Hashable {
    /// Signed out (or nobody was): `302` to the client's registered `post_logout_redirect_uri`,
    /// with `state`.
    case redirect(String)
    /// Signed out (or nobody was), and no registered place to go back to: Postern's page.
    case signedOut
    /// Nothing proves the client asked (no valid `id_token_hint`): ask "sign out?" first, with a
    /// form carrying `state` (the request, base64url) back, for `clientName` if known.
    case confirm(state: String, clientName: String?)
    /// The hint names another client than `client_id`: Postern's page, no redirect.
    case refused(OIDCPageRefusal)
}

extension OIDCFlow {
    /// `GET`/`POST /oidc/logout`: ends the browser session `session` when the client proves it asks
    /// (a valid `id_token_hint` for the person signed in here) or the person confirmed
    /// (`confirmed`, after the page's form); then back to the client only when
    /// `post_logout_redirect_uri` is registered for it, exactly. A GET from anywhere cannot sign
    /// anyone out silently.
    /// - Throws: `AuthError` when the store fails.
    public func logout(_ parameters: [String: String], session: String?, confirmed: Bool) throws(AuthError) -> OIDCLogoutOutcome {
        let hint = parameters["id_token_hint"].flatMap { verifiedHint($0) }
        let named = parameters["client_id"].flatMap { $0.isEmpty ? nil : $0 }
        if let hint, let named, hint.clientID != named { return .refused(.unknownClient) }
        let client = try (hint?.clientID ?? named).map { id throws(AuthError) in try context.read { (tx: Reads) in try tx.oidcClient(id: id) } } ?? nil
        let back = parameters["post_logout_redirect_uri"].flatMap { uri in client?.postLogoutRedirectURIMatches(uri) == true ? uri : nil }
        let now = context.clock.unixSeconds()
        let live = try liveSession(session, now: now)
        let proven = confirmed || live == nil || (hint != nil && hint?.subject == live?.account.uid)
        guard proven else {
            let kept = ["client_id": client?.clientID, "post_logout_redirect_uri": back, "state": parameters["state"]].compactMapValues { $0 }
            return .confirm(state: Self.logoutState(kept), clientName: client?.name)
        }
        if let session, live != nil {
            let hash = SHA256.hash(session)
            _ = try context.write { (tx: Writes) in try tx.deleteOIDCBrowserSession(hash: hash) }
        }
        guard let back else { return .signedOut }
        return .redirect(Self.redirect(back, ["state": parameters["state"]]))
    }

    /// The parameters a confirmation form carries back, as one base64url field.
    static func logoutState(_ parameters: [String: String]) -> String {
        Base64URL.encode(Array(JSONValue.object(parameters.mapValues(JSONValue.string)).sortedJSONText.utf8))
    }

    /// The parameters of a confirmation form's `state`; empty for anything malformed.
    public static func logoutParameters(state: String) -> [String: String] {
        guard let bytes = Base64URL.decode(state), let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            return [:]
        }
        return object.compactMapValues { $0 as? String }.filter { ["client_id", "post_logout_redirect_uri", "state"].contains($0.key) }
    }
}
