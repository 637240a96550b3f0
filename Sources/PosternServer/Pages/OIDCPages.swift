import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

/// The OpenID Connect provider's hosted sign-in page: the authorization endpoint's face and its
/// forms (docs/oidc.md). Every form carries the pending request and a CSRF token bound to the
/// browser's `postern_browser` cookie; the request itself is bound to that cookie too, so a link
/// or a form from another browser completes nothing. The decisions are `OIDCFlow`'s; this file
/// turns them into pages, redirects and cookies.
struct OIDCPages: Sendable {
    let runtime: ServerContext
    var pages: ActionPages { ActionPages(runtime: runtime) }
    var flow: OIDCFlow { runtime.service.oidc }
    var secure: Bool { runtime.settings.publicURL.hasPrefix("https:") }

    /// The browser session's cookie: `__Host-` on https (no Domain, Path=/, Secure: no subdomain
    /// can set or shadow it).
    var sessionCookieName: String { secure ? "__Host-postern_session" : "postern_session" }

    typealias Path = OIDCDiscovery.Path

    func routes() -> [Route] {
        let authorizeQuery: [RouteContract.Query] = [
            "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt",
            "max_age", "login_hint", "ui_locales", "id_token_hint", "response_mode",
        ].map { .init(name: $0, schema: .string(), required: false, description: "OpenID Connect Core 1.0 §3.1.2.1.") }
        let providerCallbackQuery: [RouteContract.Query] = ["state", "code", "error", "error_description"].map {
            .init(name: $0, schema: .string(), required: false, description: "The provider's authorization response (OpenID Connect Core 1.0 §3.1.2.5).")
        } + [.init(name: "user", schema: .string(), required: false, description: "Apple's first form_post: the person's name as JSON (unsigned: only a display name for an account without one).")]
        let htmlAnswer = RouteContract.Answer.content(mediaType: "text/html", schema: .string("An HTML page."))
        let pageStatuses: [Int: String] = [
            302: "To the client's redirect URI with a code or an error, state and iss (RFC 9207).",
            400: "A page saying what is wrong (an unknown client or redirect URI is never redirected to).",
            403: "The form's token does not match this browser.",
        ]
        // A page too: 429 past a limit (with Retry-After), 503 when the store does not answer.
        let pageErrors: [APIErrorCode] = [.tooManyAttempts, .unavailable]
        func checkedStep(_ stepPath: String, _ summary: String, fields: [JSONSchema.Property], _ body: @escaping @Sendable (OIDCPages, [String: String], String, RouteContext) throws(AuthError) -> HTTPResponse) -> Route {
            Route(method: "POST", path: stepPath, summary: summary, access: .public, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("request", .string("The pending authorization request (the page's hidden field).")),
                          .optional("csrf", .string("The form's token, bound to this browser's cookie and the request.")),
                          .optional("lang", .locale),
                      ] + fields)),
                      answer: htmlAnswer, errors: pageErrors, otherStatuses: pageStatuses)) { c throws(AuthError) in
                let form = ActionPages.formFields(c.request.body)
                guard let id = form["request"], let browser = ActionPages.browserCookie(c.request), let token = form["csrf"],
                    PageToken.check(token, cookie: browser, oobCode: Self.binding(id), ring: runtime.keys.current)
                else { return page(403, .oidcRefused(.form), lang: form["lang"]) }
                return try body(self, form, id, c)
            }.answeringErrors { error, request in errorPage(error, request) }
        }
        func step(_ stepPath: String, _ summary: String, fields: [JSONSchema.Property], _ body: @escaping @Sendable (OIDCPages, [String: String], String, HTTPRequest) throws(AuthError) -> HTTPResponse) -> Route {
            checkedStep(stepPath, summary, fields: fields) { pages, form, id, c throws(AuthError) in try body(pages, form, id, c.request) }
        }
        /// A step that sends mail: the challenge's solution checked first (a refused one shows the
        /// sign-in page again with the challenge, and sends nothing), then `send` with its pass.
        func mailingStep(_ stepPath: String, _ summary: String, fields: [JSONSchema.Property], _ send: @escaping @Sendable (OIDCPages, [String: String], String, HTTPRequest, ChallengePass) throws(AuthError) -> OIDCPageOutcome) -> Route {
            checkedStep(stepPath, summary, fields: fields + Self.challengeFields) { pages, form, id, c throws(AuthError) in
                let browser = ActionPages.browserCookie(c.request)
                let outcome: OIDCPageOutcome
                if let pass = try pages.challengePass(form, clientIP: c.clientIP) {
                    outcome = try send(pages, form, id, c.request, pass)
                } else {
                    outcome = Self.askingForChallenge(try pages.flow.restart(request: id, browser: browser))
                }
                return pages.answer(OIDCPageAnswer(outcome), browser: browser, request: c.request, typed: form["email"])
            }
        }
        return [
            Route(method: "GET", path: Path.authorization, summary: "OpenID Connect authorization endpoint: the hosted sign-in page, or a redirect", access: .public, status: 200,
                  contract: .init(answer: htmlAnswer, errors: pageErrors, query: authorizeQuery, otherStatuses: pageStatuses)) { c throws(AuthError) in
                try authorize(c, parameters: c.request.query.map { (name: $0.key, value: $0.value) })
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "POST", path: Path.authorization, summary: "OpenID Connect authorization endpoint, the parameters as a form", access: .public, status: 200,
                  contract: .init(request: .form(.object(authorizeQuery.map { .optional($0.name, .string()) })), answer: htmlAnswer, errors: pageErrors, otherStatuses: pageStatuses)) { c throws(AuthError) in
                try authorize(c, parameters: ActionPages.formPairs(c.request.body))
            }.answeringErrors { error, request in errorPage(error, request) },
            mailingStep(Path.signIn, "The sign-in page's address: mails a link bound to this browser and its 6-digit code",
                        fields: [.optional("email", .string("The address typed."))]) { pages, form, id, request, pass throws(AuthError) in
                try pages.flow.sendLink(request: id, browser: ActionPages.browserCookie(request), email: form["email"] ?? "", challengePass: pass)
            },
            step(Path.code, "The 6-digit code from the mail, typed in the browser that asked",
                 fields: [.optional("email", .string("The address.")), .optional("code", .string("The 6 digits."))]) { pages, form, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                let code = (form["code"] ?? "").filter { $0 != " " }
                let answer = try pages.flow.completeWithCode(
                    request: id, browser: browser, email: form["email"] ?? "", code: code, session: pages.sessionCookie(request))
                return pages.answer(answer, browser: browser, request: request)
            },
            mailingStep(Path.approve, "Approve on another device: mails a link whose page asks for the number this page shows (the same page for every address)",
                        fields: [.optional("email", .string("The address typed."))]) { pages, form, id, request, pass throws(AuthError) in
                let device = DeviceName(userAgent: request.headers["user-agent"]).text
                return try pages.flow.requestApproval(
                    request: id, browser: ActionPages.browserCookie(request), email: form["email"] ?? "", device: device, challengePass: pass)
            },
            step(Path.approved, "Continue after the number was typed on the other device: completes the sign-in once approved",
                 fields: [
                     .optional("email", .string("The address (the page's hidden field).")),
                     .optional("number", .string("The number the page showed (its hidden field).", pattern: "^[0-9]{2}$")),
                 ]) { pages, form, id, request throws(AuthError) in
                guard let number = form["number"].flatMap({ Int($0) }), (10...99).contains(number) else {
                    return pages.page(400, .oidcRefused(.form), lang: form["lang"])
                }
                let browser = ActionPages.browserCookie(request)
                let answer = try pages.flow.completeApproved(
                    request: id, browser: browser, email: form["email"] ?? "", number: number, session: pages.sessionCookie(request))
                return pages.answer(answer, browser: browser, request: request)
            },
            step(Path.password, "Sign in with the address and password instead",
                 fields: [.optional("email", .string("The address.")), .optional("password", .string("The password."))]) { pages, form, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                let answer = try pages.flow.completeWithPassword(
                    request: id, browser: browser, email: form["email"] ?? "", password: form["password"] ?? "", session: pages.sessionCookie(request))
                return pages.answer(answer, browser: browser, request: request)
            },
            mailingStep(Path.forgot, "Forgot your password: mails a reset link (the same page for every address)",
                        fields: [.optional("email", .string("The address."))]) { pages, form, id, request, pass throws(AuthError) in
                try pages.flow.forgotPassword(request: id, browser: ActionPages.browserCookie(request), email: form["email"] ?? "", challengePass: pass)
            },
            step(Path.restart, "Use another address: the sign-in page again", fields: []) { pages, _, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                return pages.answer(OIDCPageAnswer(try pages.flow.restart(request: id, browser: browser)), browser: browser, request: request)
            },
            step(Path.resume, "The mail's link, opened in the browser that asked: completes the sign-in",
                 fields: [.optional("oobCode", .oobCode)]) { pages, form, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                let answer = try pages.flow.completeWithLink(
                    request: id, browser: browser, oobCode: form["oobCode"] ?? "", session: pages.sessionCookie(request))
                return pages.answer(answer, browser: browser, request: request)
            },
            step(Path.consent, "The consent screen's answer",
                 fields: [.optional("decision", .oneOf(["allow", "deny"], "What the person pressed."))]) { pages, form, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                let outcome = try pages.flow.consent(
                    request: id, browser: browser, session: pages.sessionCookie(request), allow: form["decision"] == "allow")
                return pages.answer(OIDCPageAnswer(outcome), browser: browser, request: request)
            },
            step(Path.providerStart, "\"Continue with …\": the redirect to the identity provider (docs/providers.md)",
                 fields: [.optional("provider", .string("The provider's id."))]) { pages, form, id, request throws(AuthError) in
                let browser = ActionPages.browserCookie(request)
                let outcome = try pages.flow.startProvider(request: id, browser: browser, provider: form["provider"] ?? "")
                return pages.answer(OIDCPageAnswer(outcome), browser: browser, request: request)
            },
            Route(method: "GET", path: Path.providerCallback, summary: "The identity providers' redirect URI: the code redeemed, the sign-in completed in the browser that started it", access: .public, status: 200,
                  contract: .init(answer: htmlAnswer, errors: pageErrors, query: providerCallbackQuery, otherStatuses: pageStatuses)) { c throws(AuthError) in
                try runtime.service.clientLimit.admit(ip: c.clientIP)
                let query = c.request.query
                let browser = ActionPages.browserCookie(c.request)
                let answer = try flow.finishProvider(
                    state: query["state"] ?? "", code: query["code"], error: query["error"], browser: browser, session: sessionCookie(c.request),
                    appleUser: query["user"])
                return self.answer(answer, browser: browser, request: c.request)
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "POST", path: Path.providerCallback, summary: "The identity providers' redirect URI for a form_post (Apple): 303 to the same URL as a GET, so the browser's SameSite=Lax cookie comes along", access: .public, status: 303,
                  contract: .init(request: .form(.object(providerCallbackQuery.map { .optional($0.name, .string()) })), answer: .noContent,
                                  errors: pageErrors)) { c throws(AuthError) in
                let form = ActionPages.formFields(c.request.body)
                var items = URLComponents()
                items.queryItems = ["state", "code", "error", "user"].compactMap { name in form[name].map { URLQueryItem(name: name, value: $0) } }
                let query = items.percentEncodedQuery.map { "?" + $0.replacingOccurrences(of: "+", with: "%2B") } ?? ""
                return HTTPResponse(status: 303, headers: [("Location", Path.providerCallback + query), ("Referrer-Policy", "no-referrer")])
            },
            ChallengeScript.route(),
            Route(method: "GET", path: Path.endSession, summary: "RP-initiated logout: signs out with a valid id_token_hint, else asks", access: .public, status: 200,
                  contract: .init(
                      answer: htmlAnswer, errors: pageErrors,
                      query: ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales"].map {
                          .init(name: $0, schema: .string(), required: false, description: "OpenID Connect RP-Initiated Logout 1.0 §2.")
                      },
                      otherStatuses: pageStatuses.merging([302: "To the registered post_logout_redirect_uri, with state."]) { $1 })) { c throws(AuthError) in
                try logout(c.request, parameters: c.request.query)
            }.answeringErrors { error, request in errorPage(error, request) },
            Route(method: "POST", path: Path.endSession, summary: "RP-initiated logout as a form, and the confirmation page's answer", access: .public, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("request", .string("The confirmation page's state.")), .optional("csrf", .string("The form's token.")),
                          .optional("id_token_hint", .string()), .optional("client_id", .string()), .optional("post_logout_redirect_uri", .string()),
                          .optional("state", .string()),
                      ])),
                      answer: htmlAnswer, errors: pageErrors,
                      otherStatuses: pageStatuses.merging([302: "To the registered post_logout_redirect_uri, with state."]) { $1 })) { c throws(AuthError) in
                let form = ActionPages.formFields(c.request.body)
                guard let state = form["request"] else { return try logout(c.request, parameters: form) }
                guard let browser = ActionPages.browserCookie(c.request), let token = form["csrf"],
                    PageToken.check(token, cookie: browser, oobCode: Self.logoutBinding(state), ring: runtime.keys.current)
                else { return page(403, .oidcRefused(.form), lang: form["lang"]) }
                return signedOut(try flow.logout(OIDCFlow.logoutParameters(state: state), session: sessionCookie(c.request), confirmed: true), browser: browser, lang: form["lang"])
            }.answeringErrors { error, request in errorPage(error, request) },
        ]
    }

    // MARK: the endpoint and the steps

    /// The authorization endpoint: sets the `postern_browser` cookie the request will be bound to
    /// when the browser has none, and counts against the per-IP limit (it may store a request;
    /// HEAD is answered as GET and counted as one).
    private func authorize(_ c: RouteContext, parameters: [(name: String, value: String)]) throws(AuthError) -> HTTPResponse {
        // A POST was counted by the router already, as every public POST is.
        if c.request.method != "POST" { try runtime.service.clientLimit.admit(ip: c.clientIP) }
        let existing = ActionPages.browserCookie(c.request)
        let browser: String
        if let existing { browser = existing } else { browser = try OIDCFlow.randomToken() }
        let outcome = try flow.authorize(parameters, browser: browser, session: sessionCookie(c.request))
        var response = answer(OIDCPageAnswer(outcome), browser: browser, request: c.request,
                              lang: Self.language(parameters.first { $0.name == "ui_locales" }?.value))
        if existing == nil { response.headers.append(("Set-Cookie", ActionPages.setBrowserCookie(browser, secure: secure))) }
        return response
    }

    /// A step's answer: the page, or the redirect, with the new browser session's cookie. The
    /// sign-in page asking for a challenge keeps the address `typed` in the form that was sent.
    func answer(_ answer: OIDCPageAnswer, browser: String?, request: HTTPRequest, lang: String? = nil, typed: String? = nil) -> HTTPResponse {
        let form = { (pending: OIDCPending) in
            OIDCPageForm(request: pending.id, csrf: PageToken.make(cookie: browser ?? "", oobCode: Self.binding(pending.id), ring: runtime.keys.current))
        }
        func language(_ pending: OIDCPending) -> String? {
            lang ?? ActionPages.formFields(request.body)["lang"] ?? pending.uiLocales.lazy.compactMap(Self.language).first
        }
        var response: HTTPResponse
        switch answer.outcome {
        case .refused(let refusal):
            response = page(refusal == .tooManyAttempts ? 429 : 400, .oidcRefused(refusal), lang: lang)
        case .redirect(let url):
            response = HTTPResponse(status: 302, headers: [("Location", url), ("Referrer-Policy", "no-referrer")])
        case .signIn(let pending, let retry):
            let asked = retry == .challenge
            response = page(retry == nil ? 200 : 400, .oidcSignIn(
                form(pending), clientName: pending.clientName, loginHint: asked ? (typed ?? pending.loginHint) : pending.loginHint,
                passwords: true, retry: retry, providers: OIDCProviderButton.of(runtime.service.identityProviders.webProviders),
                challenge: shownChallenge(asked: asked)), lang: language(pending))
        case .checkMail(let pending, let email, let retry):
            response = page(retry ? 400 : 200, .oidcCheckMail(form(pending), email: email, retry: retry), lang: language(pending))
        case .approve(let pending, let email, let number, let waiting):
            response = page(200, .oidcApprove(form(pending), email: email, number: number, waiting: waiting), lang: language(pending))
        case .forgotSent(let pending, let email):
            response = page(200, .oidcForgotSent(email: email), lang: language(pending))
        case .consent(let pending, let email):
            response = page(200, .oidcConsent(form(pending), clientName: pending.clientName, scopes: pending.scopes, email: email), lang: language(pending))
        }
        if let session = answer.newSession {
            let age = runtime.service.oidc.sessionLifetime
            response.headers.append(("Set-Cookie", "\(sessionCookieName)=\(session); Path=/; Max-Age=\(age); HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"))
        }
        return response
    }

    private func logout(_ request: HTTPRequest, parameters: [String: String]) throws(AuthError) -> HTTPResponse {
        let existing = ActionPages.browserCookie(request)
        let browser: String
        if let existing { browser = existing } else { browser = try OIDCFlow.randomToken() }
        let lang = Self.language(parameters["ui_locales"])
        var response = signedOut(try flow.logout(parameters, session: sessionCookie(request), confirmed: false), browser: browser, lang: lang)
        if existing == nil { response.headers.append(("Set-Cookie", ActionPages.setBrowserCookie(browser, secure: secure))) }
        return response
    }

    /// Logout's answer; the session cookie is cleared whenever the session was ended.
    private func signedOut(_ outcome: OIDCLogoutOutcome, browser: String, lang: String?) -> HTTPResponse {
        let clear = ("Set-Cookie", "\(sessionCookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")")
        switch outcome {
        case .redirect(let url):
            return HTTPResponse(status: 302, headers: [("Location", url), ("Referrer-Policy", "no-referrer"), clear])
        case .signedOut:
            var response = page(200, .oidcSignedOut, lang: lang)
            response.headers.append(clear)
            return response
        case .confirm(let state, let clientName):
            let csrf = PageToken.make(cookie: browser, oobCode: Self.logoutBinding(state), ring: runtime.keys.current)
            return page(200, .oidcLogoutConfirm(OIDCPageForm(request: state, csrf: csrf), clientName: clientName), lang: lang)
        case .refused(let refusal):
            return page(400, .oidcRefused(refusal), lang: lang)
        }
    }

    /// The action page's face for a sign-in link the hosted page sent: the button that finishes
    /// the sign-in in this browser, or why not.
    func continuation(requestID: String, oobCode: String, browser: String?, lang: String?) -> HTTPResponse {
        do {
            switch try flow.continuation(request: requestID, browser: browser) {
            case .success(let pending):
                let form = OIDCPageForm(
                    request: pending.id, csrf: PageToken.make(cookie: browser ?? "", oobCode: Self.binding(pending.id), ring: runtime.keys.current))
                return page(200, .oidcContinue(form, oobCode: oobCode, clientName: pending.clientName),
                            lang: lang ?? pending.uiLocales.lazy.compactMap(Self.language).first)
            case .failure(let refusal):
                return page(400, .oidcRefused(refusal), lang: lang)
            }
        } catch {
            return errorPage(error, nil)
        }
    }

    // MARK: pieces

    /// A page of the provider: the action page's headers, but a CSP without `form-action`:
    /// Chromium and Safari apply `form-action` to the redirect that answers a form (the 302 to
    /// the client's `redirect_uri` after the code, the link's button, consent or logout), and
    /// would stop every sign-in there (seen with Chromium 156). The forms post to this origin.
    func page(_ status: Int, _ shown: HostedPage, lang: String?) -> HTTPResponse {
        var response = pages.page(status, shown, lang: lang)
        var policy = Self.contentSecurityPolicy
        if case .oidcSignIn(_, _, _, _, _, _, let challenge?) = shown { policy = ChallengeScript.contentSecurityPolicy(challenge) }
        response.headers = response.headers.map { name, value in
            name == "Content-Security-Policy" ? (name, policy) : (name, value)
        }
        return response
    }

    static let contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'"


    /// An error as a page: the limits (429 with Retry-After), a malformed request (400: an
    /// encoded NUL, which the router refuses before any handler), and the store's failures (503).
    func errorPage(_ error: AuthError, _ request: HTTPRequest?) -> HTTPResponse {
        var response: HTTPResponse
        switch error.kind {
        case .rateLimited: response = page(429, .oidcRefused(.tooManyAttempts), lang: nil)
        case .invalidInput: response = page(400, .oidcRefused(.requestExpired), lang: nil)
        case .forbidden: response = page(403, .oidcRefused(.requestExpired), lang: nil)
        default: response = page(503, .oidcRefused(.unavailable), lang: nil)
        }
        if let retryAfter = error.details["retryAfter"] { response.headers.append(("Retry-After", retryAfter)) }
        return response
    }

    // MARK: the challenge

    /// The form fields a challenge's solution may come in: ours, the ALTCHA widget's, the CAPTCHA
    /// services'.
    static let challengeFields: [JSONSchema.Property] = [
        .optional(PageChallenge.proofOfWorkField, .string("The solved challenge, filled by the page's script (empty without one): the ALTCHA payload of the proof of work from GET /v1/challenge.", maxLength: 4096)),
        .optional("altcha", .string("The ALTCHA widget's payload, for a template that uses the widget as it is.", maxLength: 4096)),
    ] + CaptchaService.allCases.map { .optional($0.formField, .string("The \($0.rawValue) widget's token, with --captcha \($0.rawValue).", maxLength: 4096)) }

    /// What the sign-in page shows to solve: the configured challenge when the flow asked for one
    /// (`asked`) or when every request must solve one (`--challenge always`).
    func shownChallenge(asked: Bool) -> PageChallenge? {
        let configuration = runtime.service.challenges.configuration
        guard asked || configuration.mode == .always else { return nil }
        return PageChallenge(configuration)
    }

    /// The pass for a form's solution: `challengeSolution`, else `altcha`, else the configured
    /// CAPTCHA's field; nil when the solution is refused (wrong, expired, used, the service said no).
    /// - Throws: `AuthError.unavailable` when the CAPTCHA service cannot be asked.
    func challengePass(_ form: [String: String], clientIP: String) throws(AuthError) -> ChallengePass? {
        let gate = runtime.service.challenges
        let names = [PageChallenge.proofOfWorkField, "altcha"] + (gate.configuration.captcha.map { [$0.formField] } ?? [])
        let solution = names.lazy.compactMap { form[$0] }.first { !$0.isEmpty }
        do throws(AuthError) {
            return try gate.check(solution: solution, clientIP: clientIP)
        } catch where error.code == APIErrorCode.challengeRequired.rawValue || error.code == APIErrorCode.invalidArgument.rawValue {
            // A refused solution, or a field too long to be one: the page asks again.
            return nil
        }
    }

    /// The sign-in page of `outcome` saying that a challenge must be solved first.
    static func askingForChallenge(_ outcome: OIDCPageOutcome) -> OIDCPageOutcome {
        guard case .signIn(let pending, _) = outcome else { return outcome }
        return .signIn(pending, retry: .challenge)
    }

    /// The browser session's cookie, if well-formed.
    func sessionCookie(_ request: HTTPRequest) -> String? { ActionPages.cookie(sessionCookieName, in: request) }

    /// What a form's CSRF token binds besides the browser: the request.
    static func binding(_ requestID: String) -> String { "oidc:\(requestID)" }
    static func logoutBinding(_ state: String) -> String { "oidc-logout:\(state)" }

    /// The first of `ui_locales` the pages have words for.
    static func language(_ uiLocales: String?) -> String? {
        (uiLocales ?? "").split(separator: " ").lazy.map { String($0.prefix(2)).lowercased() }.first { ["en", "de"].contains($0) }
    }
}
