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
                      errors: [.invalidOOBCode, .expiredOOBCode, .unavailable, .internalFailure],
                      query: [
                          .init(name: "mode", schema: .actionMode, required: false, description: "The link's action (the code says it too)."),
                          .init(name: "oobCode", schema: .oobCode, required: false, description: "The code; without it the page says the link is broken."),
                          .init(name: "continueUrl", schema: .string(), required: false, description: "Where the app continues (the code carries it too)."),
                          .init(name: "lang", schema: .locale, required: false, description: "The page's language."),
                      ])) { c throws(AuthError) in
                show(c)
            },
            Route(method: "POST", path: "/action", summary: "The hosted page's form: applies the link", access: .public, status: 200,
                  contract: .init(
                      request: .form(.object([
                          .optional("mode", .actionMode),
                          .optional("oobCode", .oobCode),
                          .optional("csrf", .string("The form's token (bound to the browser's cookie and the code).")),
                          .optional("lang", .locale),
                          .optional("newPassword", .newPassword),
                      ])),
                      answer: .content(mediaType: "text/html", schema: .string("An HTML page.")),
                      errors: [.invalidOOBCode, .expiredOOBCode, .weakPassword, .userDisabled, .emailExists, .unavailable, .internalFailure],
                      otherStatuses: [403: "The form's token is missing or does not match this browser and code."])) { c throws(AuthError) in
                submit(c)
            },
            Route(method: "GET", path: "/action.css", summary: "The hosted page's style sheet", access: .public, status: 200,
                  contract: .init(answer: .content(mediaType: "text/css", schema: .string("CSS.")))) { _ throws(AuthError) in
                HTTPResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "public, max-age=3600")],
                             body: Array(Self.styleSheet.utf8))
            },
        ]
    }

    /// GET/HEAD: inspect only.
    func show(_ c: RouteContext) -> HTTPResponse {
        let query = c.request.query
        let text = PageText(lang: query["lang"], words: runtime.pageWords)
        guard let oobCode = query["oobCode"], !oobCode.isEmpty else {
            return page(400, text, heading: text["error.heading"], body: "<p>\(text["error.invalid"])</p>")
        }
        let info: ActionInfo
        do {
            info = try runtime.service.inspectAction(link: nil, oobCode: oobCode)
        } catch {
            return errorPage(error, text)
        }
        // A fresh CSRF cookie for this browser unless it has one.
        let cookie = cookieValue(c.request) ?? Base64URL.encode((try? SecureRandom.bytes(18)) ?? [])
        let token = PageToken.make(cookie: cookie, oobCode: oobCode, ring: runtime.keys.current)
        let escapedEmail = HTMLEscaping.escape(info.email ?? "")
        let mode = info.mode.rawValue
        var body = ""
        switch info.mode {
        case .signIn:
            if let continueURL = info.continueURL {
                let target = Self.appending(to: continueURL, ["mode": "signIn", "oobCode": oobCode] + (query["lang"].map { ["lang": $0] } ?? [:]))
                body += #"<p><a class="button" href="\#(HTMLEscaping.escape(target))">\#(text["signIn.continue"])</a></p>"#
            } else {
                body += "<p>\(text["signIn.noContinue"])</p>"
            }
            if let digits = runtime.service.sixDigitCode(forSignInCode: oobCode) {
                body += #"<p>\#(text["signIn.code"])</p><p class="code" id="code">\#(digits)</p>"#
            }
        case .resetPassword:
            body += form(mode: mode, oobCode: oobCode, token: token, lang: text.lang, fields: """
                <label for="newPassword">\(text["reset.label"])</label>
                <input id="newPassword" name="newPassword" type="password" autocomplete="new-password" minlength="\(PasswordPolicy.minimumLength)" maxlength="\(PasswordPolicy.maximumLength)" required>
                """, submit: text["reset.submit"])
        case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
            body += "<p>" + text["\(mode).body"].replacingOccurrences(of: "%@", with: "<strong>\(escapedEmail)</strong>") + "</p>"
            body += form(mode: mode, oobCode: oobCode, token: token, lang: text.lang, fields: "", submit: text["\(mode).submit"])
        }
        let heading = info.mode == .resetPassword ? text["reset.heading"] : text["\(mode).heading"]
        var response = page(200, text, heading: heading, body: body)
        response.headers.append(("Set-Cookie", "\(Self.cookieName)=\(cookie); Path=/action; HttpOnly; SameSite=Strict\(runtime.settings.publicURL.hasPrefix("https:") ? "; Secure" : "")"))
        return response
    }

    /// POST: check the CSRF token, then apply.
    func submit(_ c: RouteContext) -> HTTPResponse {
        let form = Self.formFields(c.request.body)
        let text = PageText(lang: form["lang"], words: runtime.pageWords)
        guard let oobCode = form["oobCode"], let token = form["csrf"], let cookie = cookieValue(c.request),
            PageToken.check(token, cookie: cookie, oobCode: oobCode, ring: runtime.keys.current)
        else {
            return page(403, text, heading: text["error.heading"], body: "<p>\(text["error.form"])</p>")
        }
        do {
            let info = try runtime.service.inspectAction(link: nil, oobCode: oobCode)
            let applied = try runtime.service.applyAction(link: nil, oobCode: oobCode, newPassword: form["newPassword"])
            let key = applied.mode == .resetPassword ? "reset.done" : "\(applied.mode.rawValue).done"
            let sentence = text[key].replacingOccurrences(of: "%@", with: "<strong>\(HTMLEscaping.escape(applied.email))</strong>")
            var body = #"<p id="done">\#(sentence)</p>"#
            if let continueURL = info.continueURL {
                body += #"<p><a class="button" href="\#(HTMLEscaping.escape(continueURL))">\#(text["back"])</a></p>"#
            }
            return page(200, text, heading: text["done.heading"], body: body)
        } catch {
            return errorPage(error, text)
        }
    }

    private func errorPage(_ error: AuthError, _ text: PageText) -> HTTPResponse {
        // Matched against the catalogue's own errors, never against hand-typed codes.
        let message: String
        if error.code == AuthError.code(.expired).code {
            message = text["error.expired"]
        } else if let rule = error.details["rule"], error.code == AuthError.weakPassword("", rule: .tooShort).code {
            // In the page's language: the rule the password broke, not the API's English sentence.
            message = text["error.weak." + rule]
        } else if error.code == AuthError.emailExists.code {
            message = text["error.taken"]
        } else {
            message = text["error.invalid"]
        }
        return page(error.httpStatus, text, heading: text["error.heading"], body: #"<p id="error">\#(message)</p>"#)
    }

    private func form(mode: String, oobCode: String, token: String, lang: String, fields: String, submit: String) -> String {
        """
        <form method="post" action="/action">
        <input type="hidden" name="mode" value="\(HTMLEscaping.escape(mode))">
        <input type="hidden" name="oobCode" value="\(HTMLEscaping.escape(oobCode))">
        <input type="hidden" name="csrf" value="\(HTMLEscaping.escape(token))">
        <input type="hidden" name="lang" value="\(HTMLEscaping.escape(lang))">
        \(fields)
        <button type="submit" id="submit">\(submit)</button>
        </form>
        """
    }

    private func page(_ status: Int, _ text: PageText, heading: String, body: String) -> HTTPResponse {
        let html = """
            <!doctype html>
            <html lang="\(text.lang)">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex"><title>\(text["title"]) – \(heading)</title>
            <link rel="stylesheet" href="/action.css"></head>
            <body><main><h1>\(heading)</h1>
            \(body)
            </main></body></html>
            """
        return HTTPResponse(status: status, headers: Self.securityHeaders, body: Array(html.utf8))
    }

    private func cookieValue(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["cookie"] else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == Self.cookieName {
                let value = pair[1].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty, value.count <= 64, Base64URL.decode(value) != nil { return value }
            }
        }
        return nil
    }

    /// Decodes an `application/x-www-form-urlencoded` body.
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = PercentDecoding.decode(parts[0], plusIsSpace: true) ?? ""
            let value = parts.count > 1 ? (PercentDecoding.decode(parts[1], plusIsSpace: true) ?? "") : ""
            if !key.isEmpty, fields[key] == nil { fields[key] = value }
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
        input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #b8bfcc; border-radius: 4px; }
        button, .button { display: inline-block; margin-top: 1rem; padding: .7rem 1.2rem; background: #2456d6; color: #fff; border: 0; border-radius: 4px; font-size: 1rem; text-decoration: none; cursor: pointer; }
        .code { font-size: 2rem; letter-spacing: .3rem; font-family: ui-monospace, Menlo, monospace; }
        """
}

private func + (a: [String: String], b: [String: String]) -> [String: String] { a.merging(b) { $1 } }
