import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

/// The hosted action page, `/action`: GET and HEAD only look (mail scanners fetch links and must
/// not burn them); the page's form POST, protected by a per-browser CSRF token, does the work.
struct ActionPages: Sendable {
    let runtime: ServerContext
    static let cookieName = "postern_csrf"

    /// Headers every page carries: no referrer (the URL holds a code), no framing, no inline
    /// script, no caching.
    static let securityHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy",
         "default-src 'none'; style-src 'self'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
    ]

    func routes() -> [Route] {
        [
            Route(method: "GET", path: "/action", summary: "The hosted action page (never consumes the link)", access: .public, status: 200,
                  contract: .init(
                      answer: .content(mediaType: "text/html", schema: .string("An HTML page.")),
                      errors: [.invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded, .linkOtherBrowser, .unavailable, .internalFailure],
                      query: [
                          .init(name: "mode", schema: .actionMode, required: false, description: "The link's action (the code says it too)."),
                          .init(name: "oobCode", schema: .oobCode, required: false, description: "The code; without it the page says the link is broken."),
                          .init(name: "continueUrl", schema: .string(), required: false, description: "Where the app continues (the code carries it too)."),
                          .init(name: "lang", schema: .locale, required: false, description: "The page's language."),
                      ])) { c throws(AuthError) in
                show(c)
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "POST", path: "/action", summary: "The hosted page's form: applies the link", access: .public, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("mode", .actionMode),
                          .optional("oobCode", .oobCode),
                          .optional("csrf", .string("The form's token (bound to the browser's cookie and the code).")),
                          .optional("lang", .locale),
                          .optional("newPassword", .newPassword),
                          .optional("step", .oneOf(["review", "decline"], "An approval's buttons: review shows the device and asks for its number; decline (\"I did not ask for this\") changes nothing.")),
                          .optional("pick", .string("An approval's number, as the owner typed it from the asking device (a wrong one ends the approval, not the link's code).", pattern: "^[0-9]{1,2}$")),
                          .optional("confirm", .string("A verify, change or recover page's number, as the person typed it from the page.", pattern: "^ *[0-9]{3} *$")),
                      ])),
                      answer: .content(mediaType: "text/html", schema: .string("An HTML page.")),
                      errors: [.invalidOOBCode, .expiredOOBCode, .linkUsed, .linkSuperseded, .weakPassword, .userDisabled, .emailExists,
                               .unavailable, .internalFailure],
                      otherStatuses: [403: "The form's token is missing or does not match this browser and code."])) { c throws(AuthError) in
                submit(c)
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "GET", path: "/action.css", summary: "The hosted page's style sheet", access: .public, status: 200,
                  contract: .init(answer: .content(mediaType: "text/css", schema: .string("CSS.")))) { _ throws(AuthError) in
                HTTPResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "public, max-age=3600")],
                             body: Array(Self.styleSheet.utf8))
            },
        ] + phoneRoutes()
    }

    /// GET/HEAD: inspect only.
    func show(_ c: RouteContext) -> HTTPResponse {
        let query = c.request.query
        let lang = query["lang"]
        guard let oobCode = query["oobCode"], !oobCode.isEmpty else {
            return page(400, .error(.invalid), lang: lang)
        }
        let info: ActionInfo
        // The browser a bindBrowser link is bound to is known by its postern_browser cookie.
        let browser = Self.browserCookie(c.request)
        do {
            info = try runtime.service.addresses.inspect(link: nil, oobCode: oobCode)
        } catch {
            // A used sign-in link opened again in the browser that completed it: a page, not an error.
            if PageError(error) == .used,
                runtime.service.ledger.browserCheck(oobCode: oobCode, browserVerifier: browser)?.signedInHere == true
            {
                return page(200, .signedIn(backLink: nil), lang: lang)
            }
            return page(error.httpStatus, .error(PageError(error)), lang: lang)
        }
        if info.mode == .signIn, let check = runtime.service.ledger.browserCheck(oobCode: oobCode, browserVerifier: browser),
            check.browserBound, check.binding == .otherBrowser
        {
            return page(AuthError.code(.otherBrowser).httpStatus, .error(.otherBrowser), lang: lang)
        }
        // A fresh CSRF cookie for this browser unless it has one.
        let cookie = cookieValue(c.request) ?? Base64URL.encode((try? SecureRandom.bytes(18)) ?? [])
        let form = PageForm(oobCode: oobCode, csrf: PageToken.make(cookie: cookie, oobCode: oobCode, ring: runtime.keys.current))
        let shown: HostedPage
        switch info.mode {
        case .signIn where (try? runtime.service.emailLink.approvalPrompt(oobCode: oobCode)) != nil:
            // A sign-in waiting for approval: this GET only offers the button (see `submit`).
            shown = .approveReview(form)
        case .signIn where runtime.service.oidc.pendingRequestID(continueURL: info.continueURL) != nil:
            // A link the OpenID Connect provider's hosted page sent: a button that finishes the
            // sign-in in this browser (only the one that asked), posting to /oidc/resume.
            let requestID = runtime.service.oidc.pendingRequestID(continueURL: info.continueURL) ?? ""
            return OIDCPages(runtime: runtime).continuation(requestID: requestID, oobCode: oobCode, browser: browser, lang: lang)
        case .signIn:
            let target = info.continueURL.map {
                Self.appending(to: $0, ["mode": "signIn", "oobCode": oobCode] + (lang.map { ["lang": $0] } ?? [:]))
            }
            shown = .signIn(continueLink: target, code: runtime.service.ledger.sixDigitCode(forSignInCode: oobCode))
        case .resetPassword:
            shown = .resetPassword(form)
        case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
            guard let number = PageToken.confirmNumber(cookie: cookie, oobCode: oobCode, ring: runtime.keys.current) else {
                return page(503, .error(.unavailable), lang: lang)
            }
            shown = .confirm(info.mode, email: info.email ?? "", form: form, number: number)
        }
        var response = page(200, shown, lang: lang)
        response.headers.append(("Set-Cookie", "\(Self.cookieName)=\(cookie); Path=/action; HttpOnly; SameSite=Strict\(runtime.settings.publicURL.hasPrefix("https:") ? "; Secure" : "")"))
        return response
    }

    /// POST: check the CSRF token, then apply.
    func submit(_ c: RouteContext) -> HTTPResponse {
        let form = Self.formFields(c.request.body)
        let lang = form["lang"]
        guard let oobCode = form["oobCode"], let token = form["csrf"], let cookie = cookieValue(c.request),
            PageToken.check(token, cookie: cookie, oobCode: oobCode, ring: runtime.keys.current)
        else {
            return page(403, .error(.form), lang: lang)
        }
        do {
            if form["step"] == "decline" {
                // "I did not ask for this" changes nothing: a scanner presses every button, and
                // without the number nobody is signed in anyway.
                return page(200, .approveDone(device: nil), lang: lang)
            }
            if form["step"] == "review" || form["pick"] != nil {
                return try approval(oobCode: oobCode, form: form, pageForm: PageForm(oobCode: oobCode, csrf: token), lang: lang)
            }
            let info = try runtime.service.addresses.inspect(link: nil, oobCode: oobCode)
            switch info.mode {
            case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
                // The number the page showed this browser, typed: a scanner that submits the form
                // as it found it changes nothing, and spends nothing.
                let ring = runtime.keys.current
                guard PageToken.checkConfirmNumber(form["confirm"], cookie: cookie, oobCode: oobCode, ring: ring) else {
                    let number = PageToken.confirmNumber(cookie: cookie, oobCode: oobCode, ring: ring) ?? ""
                    let again = HostedPage.confirm(
                        info.mode, email: info.email ?? "", form: PageForm(oobCode: oobCode, csrf: token), number: number, retry: true)
                    return page(400, again, lang: lang)
                }
            case .signIn, .resetPassword:
                break
            }
            let applied = try runtime.service.addresses.apply(link: nil, oobCode: oobCode, newPassword: form["newPassword"])
            return page(200, .done(applied.mode, email: applied.email, backLink: info.continueURL), lang: lang)
        } catch {
            return page(error.httpStatus, .error(PageError(error)), lang: lang)
        }
    }

    /// The approval's two POSTs: the review button shows the device and asks for its number; the
    /// number typed approves (the right one) or ends the approval (any other; the link's 6-digit
    /// code still works on the asking device).
    private func approval(oobCode: String, form: [String: String], pageForm: PageForm, lang: String?) throws(AuthError) -> HTTPResponse {
        if let text = form["pick"] {
            guard let number = Int(text) else { throw .invalidArgument("pick must be a number.") }
            switch try runtime.service.emailLink.pickApproval(oobCode: oobCode, number: number) {
            case .approved(let device): return page(200, .approveDone(device: device), lang: lang)
            case .cancelled: return page(200, .approveDone(device: nil), lang: lang)
            }
        }
        guard let prompt = try runtime.service.emailLink.approvalPrompt(oobCode: oobCode) else {
            throw .invalidCode("This sign-in does not wait for an approval.")
        }
        return page(200, .approveChoice(device: prompt.device, maskedEmail: prompt.maskedEmail, form: pageForm), lang: lang)
    }

    /// An error the router raised before the page's handler ran (the per-IP limit), as a page in
    /// the language the request asked for, not as the API's English JSON.
    func errorPage(_ error: AuthError, _ request: HTTPRequest) -> HTTPResponse {
        let lang = request.query["lang"] ?? (request.method == "POST" ? Self.formFields(request.body)["lang"] : nil)
        var response = page(error.httpStatus, .error(PageError(error)), lang: lang)
        if let retryAfter = error.details["retryAfter"] { response.headers.append(("Retry-After", retryAfter)) }
        return response
    }

    /// `shown` rendered from the templates in the language `lang` asks for, with the page headers.
    func page(_ status: Int, _ shown: HostedPage, lang: String?) -> HTTPResponse {
        let rendered = runtime.pages.render(shown, lang: lang)
        return HTTPResponse(status: status, headers: Self.securityHeaders, body: Array(rendered.html.utf8))
    }

    func cookieValue(_ request: HTTPRequest) -> String? { Self.cookie(Self.cookieName, in: request) }

    /// The browser binding cookie of `bindBrowser` links: their PKCE verifier, sent on every path
    /// (the API's complete and the page), Lax so that a link opened from a mail carries it.
    static let browserCookieName = "postern_browser"

    /// The `postern_browser` cookie the request carries, if well-formed.
    static func browserCookie(_ request: HTTPRequest) -> String? { cookie(browserCookieName, in: request) }

    /// The `Set-Cookie` value that gives a browser `value` as its `postern_browser` cookie.
    static func setBrowserCookie(_ value: String, secure: Bool) -> String {
        "\(browserCookieName)=\(value); Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
    }

    /// The cookie `name` of the request: base64url, 1 to 64 characters, else nil.
    static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        guard let header = request.headers["cookie"] else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == name {
                let value = pair[1].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty, value.count <= 64, Base64URL.decode(value) != nil { return value }
            }
        }
        return nil
    }

    /// Decodes an `application/x-www-form-urlencoded` body; a name given twice keeps its first value.
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for (key, value) in formPairs(body) where fields[key] == nil { fields[key] = value }
        return fields
    }

    /// Decodes an `application/x-www-form-urlencoded` body into its fields in order, repeats
    /// kept (OAuth refuses a repeated parameter, so it must see them).
    static func formPairs(_ body: [UInt8]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = PercentDecoding.decode(parts[0], plusIsSpace: true) ?? ""
            let value = parts.count > 1 ? (PercentDecoding.decode(parts[1], plusIsSpace: true) ?? "") : ""
            if !key.isEmpty { fields.append((key, value)) }
        }
        return fields
    }

    /// `url` with `parameters` added to its query.
    static func appending(to url: String, _ parameters: [String: String]) -> String {
        guard var components = URLComponents(string: url) else { return url }
        var items = components.queryItems ?? []
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) { items.append(URLQueryItem(name: name, value: value)) }
        components.queryItems = items
        return components.string ?? url
    }

    static let styleSheet = """
        body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
        main { max-width: 28rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
        h1 { font-size: 1.4rem; margin-top: 0; }
        label { display: block; margin: 1rem 0 .3rem; }
        input[type=password], input[type=email], input#code, input#pick { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #b8bfcc; border-radius: 4px; }
        button, .button { display: inline-block; margin-top: 1rem; padding: .7rem 1.2rem; background: #2456d6; color: #fff; border: 0; border-radius: 4px; font-size: 1rem; text-decoration: none; cursor: pointer; }
        .code { font-size: 2rem; letter-spacing: .3rem; font-family: ui-monospace, Menlo, monospace; }
        .product { margin: 0 0 .5rem; color: #5b6474; font-weight: 600; }
        footer { max-width: 28rem; margin: 0 auto 3rem; padding: 0 2rem; color: #5b6474; font-size: .85rem; }
        footer a { color: #2456d6; }
        input#pick { width: 6rem; font-size: 1.6rem; letter-spacing: .3rem; font-family: ui-monospace, Menlo, monospace; }
        .secondary { background: #5b6474; }
        h2 { font-size: 1.1rem; margin: 2rem 0 0; }
        details { margin-top: 1rem; }
        summary { cursor: pointer; color: #2456d6; }
        """
}

private func + (a: [String: String], b: [String: String]) -> [String: String] { a.merging(b) { $1 } }
