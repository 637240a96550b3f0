import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// The mail caps over HTTP, as a bot behind many client IPs meets them: the domain's cap holds
/// whatever X-Forwarded-For says, the answer past it is one byte string for every address, and the
/// admin API still mails.
@Suite("Mail caps over HTTP")
struct MailCapRoutesTests {
    static let token = "mail-caps-admin-test-token-0123456789"

    /// A router behind the proxy 192.0.2.1 (``RouterTests/request`` comes from there), with
    /// `--ip-per-minute 10` and the caps of `configure`.
    static func harness(_ configure: @escaping (inout Settings) -> Void) throws -> RouterTests.Harness {
        try RouterTests.harnessWithService(adminToken: token, ipPerMinute: 10) {
            $0.trustedProxies = ["192.0.2.1/32"]
            configure(&$0)
        }
    }

    static func post(_ h: RouterTests.Harness, _ path: String, _ body: String, from client: String) -> HTTPResponse {
        // The leftmost entry is the client's own say: only the proxy's rightmost one counts.
        let headers = ["content-type": "application/json", "x-forwarded-for": "203.0.113.77, \(client)"]
        return h.router.handle(HTTPRequest(method: "POST", path: path, query: [:], headers: headers, body: Array(body.utf8), clientIP: "192.0.2.1"))
    }

    static func sendLink(_ h: RouterTests.Harness, _ email: String, from client: String) -> HTTPResponse {
        post(h, "/v1/email-link/send", #"{"email":"\#(email)"}"#, from: client)
    }

    @Test("attacker: 1,000 distinct addresses at one domain from 200 client IPs (X-Forwarded-For through --trusted-proxies) stop at the domain cap of 100; all 900 refusals are one 429 byte for byte; /metrics counts them")
    func manyClientsStopAtTheDomainCap() throws {
        let h = try Self.harness { $0.mailDomainPerHour = 100 }
        var accepted = 0
        var refusals: [String: Int] = [:]
        for i in 0..<1_000 {
            // 5 requests from each client: under its 10 a minute, so only the cap refuses.
            let response = Self.sendLink(h, "user\(i)@Example.ORG", from: "198.51.100.\(i % 200)")
            if response.status == 202 {
                accepted += 1
            } else {
                #expect(response.status == 429 && RouterTests.errorCode(response) == "TOO_MANY_ATTEMPTS_TRY_LATER")
                refusals["\(response.headers)|\(String(decoding: response.body, as: UTF8.self))", default: 0] += 1
            }
        }
        #expect(accepted == 100 && h.store.queuedMail().count == 100)
        #expect(refusals.count == 1 && refusals.values.first == 900)
        // The cap is per domain: another domain, from the same clients, still gets mail.
        #expect(Self.sendLink(h, "user@example.net", from: "198.51.100.1").status == 202)
        let metrics = h.router.handle(RouterTests.request("GET", "/metrics", bearer: Self.token))
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"postern_mail_caps_hit_total{cap="domain"} 900"#))
        #expect(text.contains(#"postern_mail_caps_hit_total{cap="total"} 0"#))
        // One log line for the domain's hour, naming the domain and never an address.
        let lines = h.log().filter { $0.contains("mail domain cap reached") }
        #expect(lines.count == 1 && lines.allSatisfy { $0.contains("example.org") && !$0.contains("user") })
    }

    @Test("no oracle: past the caps, send-link, sign-up and reset answer an address with an account and one without with the same status, headers and bytes; nothing is queued")
    func sameBytesWithOrWithoutAccount() throws {
        let h = try Self.harness { $0.mailDomainPerHour = 2; $0.mailPerHourTotal = 2 }
        _ = try h.service.emailLink.send(EmailLinkRequest(email: "owner@example.org"))
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try FlowHarnessLink.last(h)))
        #expect(Self.sendLink(h, "x@example.org", from: "198.51.100.1").status == 202)
        let queued = h.store.queuedMail().count
        for (path, body) in [
            ("/v1/email-link/send", #"{"email":"%@"}"#),
            ("/v1/password/reset", #"{"email":"%@"}"#),
            ("/v1/password/sign-up", #"{"email":"%@","password":"correct horse battery staple"}"#),
        ] {
            let owner = Self.post(h, path, body.replacingOccurrences(of: "%@", with: "owner@example.org"), from: "198.51.100.2")
            let nobody = Self.post(h, path, body.replacingOccurrences(of: "%@", with: "nobody@example.org"), from: "198.51.100.3")
            #expect(owner.status == 429 && RouterTests.header(owner, "Retry-After") != nil, "\(path)")
            #expect(owner.status == nobody.status && owner.body == nobody.body, "\(path)")
            #expect(owner.headers.map { "\($0.0): \($0.1)" } == nobody.headers.map { "\($0.0): \($0.1)" }, "\(path)")
        }
        // The total cap (2) is reached too: another domain is refused with the same answer.
        let elsewhere = Self.sendLink(h, "someone@example.net", from: "198.51.100.4")
        #expect(elsewhere.status == 429)
        #expect(h.store.queuedMail().count == queued)
    }

    @Test("the admin API's POST /v1/admin/links with send mails past both caps")
    func adminSendsPastTheCaps() throws {
        let h = try Self.harness { $0.mailDomainPerHour = 1; $0.mailPerHourTotal = 1 }
        #expect(Self.sendLink(h, "a@example.org", from: "198.51.100.1").status == 202)
        #expect(Self.sendLink(h, "b@example.org", from: "198.51.100.1").status == 429)
        for i in 0..<3 {
            let response = h.router.handle(RouterTests.request(
                "POST", "/v1/admin/links", body: #"{"action":"sign-in","email":"c\#(i)@example.org","send":true}"#, bearer: Self.token))
            #expect(response.status == 200 && RouterTests.json(response)["queued"] as? Bool == true)
        }
        #expect(h.store.queuedMail().count == 4)
    }
}

/// The link of the newest queued mail behind a router harness.
enum FlowHarnessLink {
    static func last(_ h: RouterTests.Harness) throws -> String {
        let queued = try #require(h.store.queuedMail().last)
        let composed = try h.service.mailComposer.compose(queued.intent, recipient: queued.recipient)
        guard case .signIn(let link, _, _) = composed?.message.content else { throw Missing() }
        return link
    }

    struct Missing: Error {}
}
