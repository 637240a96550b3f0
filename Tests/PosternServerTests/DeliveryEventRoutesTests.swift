import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// `/v1/delivery-events/*` through the router: public (no admin token), 404 until configured, 401
/// for a provider's proof that fails, the same answer shape for all three; the suppressions they
/// make are the admin API's; `/metrics` counts them.
@Suite("The delivery-event routes")
struct DeliveryEventRoutesTests {
    static let token = "delivery-events-admin-token-0123456789"
    static let secret = "whsec_" + Data(repeating: 0x24, count: 32).base64EncodedString()
    static let postmark = "postmark:correct-horse-battery-staple"
    /// The router harness's manual clock's start.
    static let now: Int64 = 1_800_000_000

    static func post(_ path: String, _ body: [UInt8], headers: [String: String], contentType: String = "application/json") -> HTTPRequest {
        var all = headers
        all["content-type"] = contentType
        return HTTPRequest(method: "POST", path: path, query: [:], headers: all, body: body, clientIP: "192.0.2.1")
    }

    static func answer(_ response: HTTPResponse) throws -> DeliveryEventResultBody {
        try JSONDecoder().decode(DeliveryEventResultBody.self, from: Data(response.body))
    }

    static func harness(_ sns: TestSNS) throws -> RouterTests.Harness {
        try RouterTests.harnessWithService(
            adminToken: token,
            deliveryEventSources: DeliveryEventSources(
                ses: .init(topicARNs: [TestSNS.topic], certificateHosts: .amazon, http: sns),
                postmark: try PostmarkCredentials(line: postmark), webhookSecrets: [try WebhookSecret(secret)]))
    }

    @Test("unconfigured, each route is 404 NOT_FOUND naming its setting; no route asks for the admin token")
    func notConfigured() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        for (path, setting) in [
            ("/v1/delivery-events/ses", "--ses-topic-arns"), ("/v1/delivery-events/postmark", "--postmark-webhook-credentials-file"),
            ("/v1/delivery-events/standard-webhooks", "--delivery-webhook-secret-file"),
        ] {
            let response = h.router.handle(Self.post(path, Array("{}".utf8), headers: [:]))
            #expect(response.status == 404 && RouterTests.errorCode(response) == "NOT_FOUND")
            #expect(String(decoding: response.body, as: UTF8.self).contains(setting))
        }
    }

    @Test("SNS posts text/plain: a signed bounce and complaint land in the admin API's list; a forged one is 401 UNAUTHORIZED; /metrics counts both")
    func ses() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        let bounce = h.router.handle(Self.post("/v1/delivery-events/ses", try sns.notification(TestSNS.bounce(["ann@example.com"])), headers: [:],
                                                contentType: "text/plain; charset=UTF-8"))
        #expect(try bounce.status == 200 && Self.answer(bounce) == DeliveryEventResultBody(suppressed: 1, ignored: 0))
        let complaint = h.router.handle(Self.post("/v1/delivery-events/ses", try sns.notification(TestSNS.complaint(["bob@example.com"])), headers: [:]))
        #expect(try complaint.status == 200 && Self.answer(complaint).suppressed == 1)
        let forged = h.router.handle(Self.post(
            "/v1/delivery-events/ses", try sns.notification(TestSNS.bounce(["eve@example.com"]), topic: "arn:aws:sns:us-east-1:666:evil"), headers: [:]))
        #expect(forged.status == 401 && RouterTests.errorCode(forged) == "UNAUTHORIZED")
        let list = h.router.handle(RouterTests.request("GET", "/v1/admin/suppressions", bearer: Self.token))
        let body = try JSONDecoder().decode(SuppressionListBody.self, from: Data(list.body))
        #expect(Set(body.suppressions.map { "\($0.email) \($0.reason)" }) == ["ann@example.com bounce", "bob@example.com complaint"])
        let metrics = String(decoding: h.router.handle(RouterTests.request("GET", "/metrics", bearer: Self.token)).body, as: UTF8.self)
        #expect(metrics.contains(#"postern_delivery_events_total{provider="ses",outcome="suppressed"} 2"#))
        #expect(metrics.contains(#"postern_delivery_events_total{provider="ses",outcome="refused"} 1"#))
        #expect(metrics.contains(#"postern_delivery_events_total{provider="postmark",outcome="suppressed"} 0"#))
    }

    @Test("Postmark with the Basic credentials of its URL is 200; without them or with others 401")
    func postmark() throws {
        let h = try Self.harness(try TestSNS())
        let body = Array(#"{"RecordType":"Bounce","Type":"HardBounce","Email":"ann@example.com"}"#.utf8)
        let right = h.router.handle(Self.post("/v1/delivery-events/postmark", body, headers: ["authorization": "Basic " + Data(Self.postmark.utf8).base64EncodedString()]))
        #expect(try right.status == 200 && Self.answer(right) == DeliveryEventResultBody(suppressed: 1, ignored: 0))
        for headers in [[:], ["authorization": "Basic " + Data("postmark:wrong-password-000000".utf8).base64EncodedString()], ["authorization": "Bearer \(Self.token)"]] {
            let wrong = h.router.handle(Self.post("/v1/delivery-events/postmark", body, headers: headers))
            #expect(wrong.status == 401 && RouterTests.errorCode(wrong) == "UNAUTHORIZED")
        }
    }

    @Test("Standard Webhooks under the webhook-* and Resend's svix-* header names; the same id again is 401")
    func standardWebhooks() throws {
        let h = try Self.harness(try TestSNS())
        let secret = try WebhookSecret(Self.secret)
        for (prefix, address) in [("webhook", "ann@example.com"), ("svix", "bob@example.com")] {
            let text = #"{"type":"email.complained","data":{"to":["\#(address)"]}}"#
            let id = "msg_\(prefix)"
            let headers = [
                "\(prefix)-id": id, "\(prefix)-timestamp": String(Self.now),
                "\(prefix)-signature": secret.signature(id: id, timestamp: Self.now, body: text),
            ]
            let response = h.router.handle(Self.post("/v1/delivery-events/standard-webhooks", Array(text.utf8), headers: headers))
            #expect(try response.status == 200 && Self.answer(response) == DeliveryEventResultBody(suppressed: 1, ignored: 0), "\(prefix)")
            let again = h.router.handle(Self.post("/v1/delivery-events/standard-webhooks", Array(text.utf8), headers: headers))
            #expect(again.status == 401 && String(decoding: again.body, as: UTF8.self).contains("replay"), "\(prefix)")
        }
        #expect(try h.service.operators.suppression(email: "bob@example.com")?.reason == .complaint)
    }
}
