import Foundation
import PosternAPI
import PosternCrypto

/// "Approve on your other device" on the hosted sign-in page, without a script: the browser asks
/// (`POST /oidc/approve`), the mail goes out as an approval (``EmailLinkFlow/send(_:)`` with
/// `approvalDevice`), the page shows the 2-digit number to type on the other device's page, and
/// the person presses Continue here (`POST /oidc/approved`) once they have.
///
/// The approval's PKCE verifier is the waiting device's secret. Here it is derived from the
/// browser's `postern_browser` cookie and the request id, so nothing new is stored and only this
/// browser, for this request, can take the session an approval gives: another browser's Continue
/// has another verifier (and the request refuses it before that).
extension OIDCFlow {
    /// Mails an approval request for request `id` to `email`; `device` names this browser on the
    /// other device's page ("Chrome on Linux"). The same page follows for every address: the
    /// number is drawn whatever the address.
    /// - Throws: `AuthError` for the limits of send-link (`TOO_MANY_ATTEMPTS_TRY_LATER`), an
    ///   unusable device name, and the store.
    public func requestApproval(
        request id: String, browser: String?, email: String, device: String, challengePass: ChallengePass = .none
    ) throws(AuthError) -> OIDCPageOutcome {
        try step(id, browser: browser) { found throws(AuthError) in
            guard let browser else { return .refused(.otherBrowser) }
            let typed = email.trimmingCharacters(in: .whitespaces)
            let verifier = Self.approvalVerifier(browser: browser, request: id)
            let number: Int?
            do throws(AuthError) {
                number = try emailLink.send(
                    EmailLinkRequest(
                        email: typed, locale: found.request.uiLocales.first, codeChallenge: FlowContext.s256Challenge(of: verifier),
                        approvalDevice: device, challengePass: challengePass))
            } catch where error.code == APIErrorCode.invalidEmail.rawValue {
                return .signIn(found.view, retry: .badAddress)
            } catch where error.code == APIErrorCode.challengeRequired.rawValue {
                return .signIn(found.view, retry: .challenge)
            }
            guard let number else { throw .internalError("an approval was recorded without its number") }
            return .approve(found.view, email: typed, number: number, waiting: false)
        }
    }

    /// Continue, pressed in the browser holding request `id` after `number` (shown again while it
    /// waits) was typed on the other device: signs in when the approval was given; the approve page
    /// again, saying so, while it was not; the sign-in page (`approvalEnded`) when the approval
    /// ended (a wrong number, expired, used). `session`: the browser's session cookie, replaced
    /// by a new one.
    /// - Throws: `AuthError` for the sign-in's own refusals (`USER_DISABLED`, …) and the store.
    public func completeApproved(request id: String, browser: String?, email: String, number: Int, session: String?) throws(AuthError) -> OIDCPageAnswer {
        try signInStep(id, browser: browser) { found throws(AuthError) in
            guard let browser else { return OIDCPageAnswer(.refused(.otherBrowser)) }
            let typed = email.trimmingCharacters(in: .whitespaces)
            let login: LoginDescriptor?
            do throws(AuthError) {
                login = try emailLink.approvalResult(
                    email: typed, codeVerifier: Self.approvalVerifier(browser: browser, request: id), idToken: nil, allowMigration: nil)
            } catch where error.kind == .invalidInput {
                // No open approval of this address has this browser's verifier: cancelled by a wrong
                // number, expired, used, or never asked for (an address changed in the form).
                return OIDCPageAnswer(.signIn(found.view, retry: .approvalEnded))
            }
            guard let login else { return OIDCPageAnswer(.approve(found.view, email: typed, number: number, waiting: true)) }
            return try signedIn(found, login: login, method: .approval, replacing: session)
        }
    }

    /// The approval's PKCE verifier for `browser`'s request `id`: base64url(SHA-256) of both, 43
    /// characters. The cookie is HttpOnly and never leaves the browser and this server.
    static func approvalVerifier(browser: String, request id: String) -> String {
        Base64URL.encode(SHA256.hash("postern-oidc-approval|" + browser + "|" + id))
    }
}
