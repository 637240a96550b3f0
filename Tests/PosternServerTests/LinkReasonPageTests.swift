import Foundation
import PosternCore
import PosternTestSupport
@testable import PosternServer
import Testing

/// Why a link failed, through the router: bindBrowser's cookie, the complete that reads it, and
/// the hosted page's other-browser sentence and "already signed in" page.
@Suite("Link failure reasons through the router")
struct LinkReasonPageTests {
    static func with(_ request: HTTPRequest, cookie: String?) -> HTTPRequest {
        guard let cookie else { return request }
        return HTTPRequest(
            method: request.method, path: request.path, query: request.query,
            headers: request.headers.merging(["cookie": "postern_csrf=x; postern_browser=\(cookie)"]) { $1 }, body: request.body,
            clientIP: request.clientIP)
    }

    @Test("bindBrowser sets the cookie once; the page tells another browser, and the completing one it is signed in")
    func bound() throws {
        let h = try RouterTests.harnessWithService { $0.allowedContinueHosts = ["app.example.com"] }
        let sent = h.router.handle(RouterTests.request("POST", "/v1/email-link/send", body: #"{"email":"ann@example.com","bindBrowser":true}"#))
        #expect(sent.status == 202)
        let header = try #require(RouterTests.header(sent, "Set-Cookie"))
        #expect(header.hasSuffix("; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax"), "\(header)")
        let cookie = String(header.dropFirst("postern_browser=".count).prefix { $0 != ";" })
        #expect(cookie.count == 32)
        let again = h.router.handle(Self.with(
            RouterTests.request("POST", "/v1/email-link/send", body: #"{"email":"bob@example.com","bindBrowser":true}"#), cookie: cookie))
        #expect(again.status == 202 && RouterTests.header(again, "Set-Cookie") == nil, "a browser with its cookie keeps it")
        // Without bindBrowser no cookie is set.
        let plain = h.router.handle(RouterTests.request("POST", "/v1/email-link/send", body: #"{"email":"cid@example.com"}"#))
        #expect(RouterTests.header(plain, "Set-Cookie") == nil)

        let queued = try #require(h.store.queuedMail().first { $0.recipient.address == "ann@example.com" })
        let composed = try #require(try h.service.mailComposer.compose(queued.intent, recipient: queued.recipient))
        guard case .signIn(let link, _, _) = composed.message.content else { Issue.record("a sign-in mail"); return }
        let oobCode = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
        func page(_ cookie: String?) -> (Int, String) {
            let response = h.router.handle(Self.with(RouterTests.request("GET", "/action", query: ["oobCode": oobCode]), cookie: cookie))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        let other = page(nil)
        #expect(other.0 == 400 && other.1.contains(#"<p id="error">This link was asked for in another browser."#))
        #expect(page("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").1.contains("asked for in another browser"))
        let own = page(cookie)
        #expect(own.0 == 200 && own.1.contains("<h1>Sign in</h1>") && !own.1.contains(#"id="error""#))

        let completeBody = #"{"oobCode":"\#(oobCode)"}"#
        let elsewhere = h.router.handle(RouterTests.request("POST", "/v1/email-link/complete", body: completeBody))
        #expect(elsewhere.status == 400 && (RouterTests.json(elsewhere)["error"] as? [String: Any])?["code"] as? String == "LINK_OTHER_BROWSER")
        let done = h.router.handle(Self.with(RouterTests.request("POST", "/v1/email-link/complete", body: completeBody), cookie: cookie))
        #expect(done.status == 200)
        let replay = h.router.handle(Self.with(RouterTests.request("POST", "/v1/email-link/complete", body: completeBody), cookie: cookie))
        let error = try #require(RouterTests.json(replay)["error"] as? [String: Any])
        #expect(replay.status == 400 && error["code"] as? String == "LINK_USED" && error["signedInHere"] as? String == "true")

        let signedIn = page(cookie)
        #expect(signedIn.0 == 200 && signedIn.1.contains(#"<p id="done">You are already signed in"#))
        let used = page(nil)
        #expect(used.0 == 400 && used.1.contains(#"<p id="error">This link was already used."#))
        // The metrics say each reason.
        let metrics = String(decoding: APIRouter.metricsAnswer(
            service: h.service, metrics: HTTPMetrics(), housekeeping: HousekeepingMetrics()).body, as: UTF8.self)
        #expect(metrics.contains(#"postern_link_failures_total{reason="other_browser"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"postern_link_failures_total{reason="used"} 3"#), "the replay and two page views")
    }
}
