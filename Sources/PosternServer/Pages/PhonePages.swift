import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

/// The page a phone claim's SMS links to, `/phone?claim=ID`: where the number's holder, when it
/// is not the account's owner, types the code and confirms the claim or refuses it (deleting it).
/// GET only shows the form (a link preview must not act); the form POST, with a CSRF token bound
/// to the browser's cookie and the claim, does the work. The code is what proves the number: the
/// claim id in the link alone does nothing.
extension ActionPages {
    func phoneRoutes() -> [Route] {
        [
            Route(method: "GET", path: "/phone", summary: "The page a phone claim's SMS links to: the code field (acts on nothing)", access: .public, status: 200,
                  contract: .init(
                      answer: .content(mediaType: "text/html", schema: .string("An HTML page.")),
                      errors: [.invalidPhoneCode, .unavailable, .internalFailure],
                      query: [
                          .init(name: "claim", schema: .phoneClaimID, required: false, description: "The claim the SMS is for; without it the page says the link is broken."),
                          .init(name: "lang", schema: .locale, required: false, description: "The page's language."),
                      ])) { c throws(AuthError) in
                showPhone(c)
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "POST", path: "/phone", summary: "The phone page's form: proves the number with the code, or refuses the claim", access: .public, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("claim", .phoneClaimID),
                          .optional("csrf", .string("The form's token (bound to the browser's cookie and the claim).")),
                          .optional("lang", .locale),
                          .optional("code", .string("The 6 digits from the SMS.", pattern: "^[0-9]{6}$")),
                          .optional("answer", .oneOf(["prove", "refuse"], "prove: the number may join the account; refuse: delete the claim.")),
                      ])),
                      answer: .content(mediaType: "text/html", schema: .string("An HTML page.")),
                      errors: [.invalidPhoneCode, .invalidArgument, .unavailable, .internalFailure],
                      otherStatuses: [403: "The form's token is missing or does not match this browser and claim."])) { c throws(AuthError) in
                submitPhone(c)
            }.answeringErrors { error, request in errorPage(error, request) },
        ]
    }

    private static func phoneBinding(_ claimID: String) -> String { "phone-claim:\(claimID)" }

    /// GET: the form, for any well-formed claim id (whether it exists is for the code to say).
    func showPhone(_ c: RouteContext) -> HTTPResponse {
        let lang = c.request.query["lang"]
        guard let claimID = c.request.query["claim"], claimID.utf8.count == 22, Base64URL.decode(claimID)?.count == 16 else {
            return page(400, .error(.invalid), lang: lang)
        }
        let cookie = cookieValue(c.request) ?? Base64URL.encode((try? SecureRandom.bytes(18)) ?? [])
        let csrf = PageToken.make(cookie: cookie, oobCode: Self.phoneBinding(claimID), ring: runtime.keys.current)
        var response = page(200, .phoneClaim(claimID: claimID, csrf: csrf), lang: lang)
        response.headers.append(("Set-Cookie", "\(Self.cookieName)=\(cookie); Path=/phone; HttpOnly; SameSite=Strict\(runtime.settings.publicURL.hasPrefix("https:") ? "; Secure" : "")"))
        return response
    }

    /// POST: check the token, then prove or refuse with the code.
    func submitPhone(_ c: RouteContext) -> HTTPResponse {
        let form = Self.formFields(c.request.body)
        let lang = form["lang"]
        guard let claimID = form["claim"], let token = form["csrf"], let cookie = cookieValue(c.request),
            PageToken.check(token, cookie: cookie, oobCode: Self.phoneBinding(claimID), ring: runtime.keys.current)
        else {
            return page(403, .error(.form), lang: lang)
        }
        let code = form["code"] ?? ""
        // A scanner submits the form as it found it, the code field empty, and presses both
        // buttons: without six digits typed the page asks again, and no try is counted.
        guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return page(400, .phoneClaim(claimID: claimID, csrf: token), lang: lang)
        }
        do {
            switch form["answer"] {
            case "refuse":
                try runtime.service.phoneHolder.delete(claimID: claimID, code: code)
                return page(200, .phoneDone(refused: true), lang: lang)
            default:
                _ = try runtime.service.phoneHolder.prove(claimID: claimID, code: code)
                return page(200, .phoneDone(refused: false), lang: lang)
            }
        } catch {
            return page(error.httpStatus, .error(PageError(error)), lang: lang)
        }
    }
}
