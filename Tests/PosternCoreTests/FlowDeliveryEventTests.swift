import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The providers' delivery events: what each suppresses, and the attacker's requests each refuses
/// before anything is written.
@Suite("Delivery events from SES over SNS, Postmark and Standard Webhooks")
struct FlowDeliveryEventTests {
    static let postmarkLine = "postmark:correct-horse-battery-staple"
    static let webhookSecret = "whsec_" + Data(repeating: 0x42, count: 32).base64EncodedString()

    static func harness(_ sns: TestSNS? = nil) throws -> FlowHarness {
        let sources = DeliveryEventSources(
            ses: sns.map { .init(topicARNs: [TestSNS.topic], certificateHosts: .amazon, http: $0) },
            postmark: try PostmarkCredentials(line: postmarkLine), webhookSecrets: [try WebhookSecret(webhookSecret)])
        return try FlowHarness(deliveryEventSources: sources)
    }

    static func suppression(_ h: FlowHarness, _ email: String) throws -> Suppression? { try h.service.operators.suppression(email: email) }

    static func basic(_ credentials: String) -> String { "Basic " + Data(credentials.utf8).base64EncodedString() }

    static func count(_ h: FlowHarness, _ provider: DeliveryEventIntake.Provider, _ outcome: DeliveryEventMetrics.Outcome) -> Int {
        h.service.deliveryEvents.metrics.snapshot().first { $0.provider == provider && $0.outcome == outcome }?.count ?? 0
    }

    // MARK: SES

    @Test("an SNS notification of a permanent bounce (versions 1 and 2) suppresses each recipient as a bounce naming the provider, not the address")
    func sesBounce() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        let one = try h.service.deliveryEvents.ses(try sns.notification(TestSNS.bounce(["ann@example.com", "bob@example.org"]), version: "1"))
        #expect(one == DeliveryEventResult(suppressed: 2, ignored: 0))
        let two = try h.service.deliveryEvents.ses(try sns.notification(TestSNS.bounce(["cy@example.com"]), version: "2", subject: nil))
        #expect(two == DeliveryEventResult(suppressed: 1, ignored: 0))
        let ann = try #require(try Self.suppression(h, "ann@example.com"))
        #expect(ann.reason == .bounce && ann.detail == "amazon-ses Permanent/General 5.1.1")
        #expect(try Self.suppression(h, "bob@example.org")?.reason == .bounce && Self.suppression(h, "cy@example.com") != nil)
        #expect(sns.fetched == [TestSNS.certificateURL], "the certificate is fetched once, then cached")
        #expect(Self.count(h, .ses, .suppressed) == 3)
    }

    @Test("a transient bounce and a delivery are ignored; a complaint suppresses as a complaint that a later bounce does not overwrite")
    func sesComplaint() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        #expect(try h.service.deliveryEvents.ses(try sns.notification(TestSNS.bounce(["ann@example.com"], bounceType: "Transient")))
            == DeliveryEventResult(suppressed: 0, ignored: 1))
        #expect(try h.service.deliveryEvents.ses(try sns.notification(#"{"eventType":"Delivery","mail":{}}"#))
            == DeliveryEventResult(suppressed: 0, ignored: 1))
        #expect(try Self.suppression(h, "ann@example.com") == nil)
        #expect(try h.service.deliveryEvents.ses(try sns.notification(TestSNS.complaint(["ann@example.com"])))
            == DeliveryEventResult(suppressed: 1, ignored: 0))
        _ = try h.service.deliveryEvents.ses(try sns.notification(TestSNS.bounce(["ann@example.com"])))
        let ann = try #require(try Self.suppression(h, "ann@example.com"))
        #expect(ann.reason == .complaint && ann.detail == "amazon-ses abuse")
        #expect(Self.count(h, .ses, .ignored) == 2)
    }

    @Test("refused with 401 before anything is written: a changed message, another topic, an unknown SignatureVersion, a certificate URL off SNS")
    func sesAttacks() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        let signed = try sns.notification(TestSNS.bounce(["ann@example.com"]))
        let tampered = Array(String(decoding: signed, as: UTF8.self).replacingOccurrences(of: "ann@example.com", with: "eve@example.com").utf8)
        var attacks: [[UInt8]] = [
            tampered,
            try sns.notification(TestSNS.bounce(["eve@example.com"]), topic: "arn:aws:sns:us-east-1:666:attacker"),
            try sns.notification(TestSNS.bounce(["eve@example.com"]), version: "3"),
        ]
        for url in [
            "http://sns.us-east-1.amazonaws.com/x.pem", "https://sns.us-east-1.amazonaws.com.evil.com/x.pem",
            "https://evil.com/sns.us-east-1.amazonaws.com/x.pem", "https://user@sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com:8443/x.pem",
        ] {
            attacks.append(try sns.notification(TestSNS.bounce(["eve@example.com"]), certificateURL: url))
        }
        for body in attacks {
            let error = #expect(throws: AuthError.self) { try h.service.deliveryEvents.ses(body) }
            #expect(error?.code == "UNAUTHORIZED" && error?.kind == .unauthorized)
        }
        #expect(try Self.suppression(h, "eve@example.com") == nil && Self.suppression(h, "ann@example.com") == nil)
        #expect(sns.fetched.allSatisfy { $0 == TestSNS.certificateURL }, "no certificate is fetched from another URL")
        #expect(Self.count(h, .ses, .refused) == attacks.count)
    }

    @Test("a notification is taken once: replayed after a sign-in lifted its suppression, or sent over an hour ago, or from the future, it is 401")
    func sesReplay() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        let now = h.clock.unixSeconds()
        let bounce = try sns.notification(TestSNS.bounce(["ann@example.com"]), sentAt: now - 60, messageID: "m-once")
        #expect(try h.service.deliveryEvents.ses(bounce) == DeliveryEventResult(suppressed: 1, ignored: 0))
        #expect(try h.service.operators.removeSuppression(email: "ann@example.com"))
        let replays: [[UInt8]] = [
            bounce,
            try sns.notification(TestSNS.bounce(["ann@example.com"]), sentAt: now - 60, messageID: "m-once"),
            try sns.notification(TestSNS.bounce(["ann@example.com"]), sentAt: now - DeliveryEventIntake.snsMaximumAge - 1),
            try sns.notification(TestSNS.bounce(["ann@example.com"]), sentAt: now + DeliveryEventIntake.timestampTolerance + 1),
        ]
        for body in replays {
            let error = #expect(throws: AuthError.self) { try h.service.deliveryEvents.ses(body) }
            #expect(error?.code == "UNAUTHORIZED")
        }
        #expect(try Self.suppression(h, "ann@example.com") == nil, "no replay suppressed it again")
        let late = try sns.notification(TestSNS.bounce(["ann@example.com"]), sentAt: now - DeliveryEventIntake.snsMaximumAge)
        #expect(try h.service.deliveryEvents.ses(late) == DeliveryEventResult(suppressed: 1, ignored: 0), "the last retry SNS makes is taken")
    }

    @Test("a signed SubscriptionConfirmation is confirmed by a GET of its SubscribeURL; one off SNS is not fetched; an unsigned one is 401")
    func sesSubscription() throws {
        let sns = try TestSNS()
        let h = try Self.harness(sns)
        let subscribe = "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=\(TestSNS.topic)&Token=2336"
        #expect(try h.service.deliveryEvents.ses(try sns.confirmation(subscribeURL: subscribe)) == DeliveryEventResult(suppressed: 0, ignored: 0))
        #expect(sns.fetched == [TestSNS.certificateURL, subscribe])
        _ = try h.service.deliveryEvents.ses(try sns.confirmation(subscribeURL: "https://evil.com/?Action=ConfirmSubscription"))
        #expect(sns.fetched == [TestSNS.certificateURL, subscribe])
        let forged = Array(String(decoding: try sns.confirmation(subscribeURL: subscribe), as: UTF8.self)
            .replacingOccurrences(of: "Token=2336", with: "Token=6666").utf8)
        #expect(throws: AuthError.self) { try h.service.deliveryEvents.ses(forged) }
        #expect(sns.fetched.count == 2)
        _ = try h.service.deliveryEvents.ses(try sns.confirmation(subscribeURL: subscribe, type: "UnsubscribeConfirmation"))
        #expect(sns.fetched.count == 2, "an unsubscribe confirmation fetches nothing")
    }

    @Test("each route is 404 NOT_FOUND until its provider is configured")
    func notConfigured() throws {
        let h = try FlowHarness()
        for call in [
            { () throws -> DeliveryEventResult in try h.service.deliveryEvents.ses([]) },
            { try h.service.deliveryEvents.postmark([], authorization: nil) },
            { try h.service.deliveryEvents.standardWebhook([], id: nil, timestamp: nil, signature: nil) },
        ] {
            let error = #expect(throws: AuthError.self) { try call() }
            #expect(error?.kind == .notFound && error?.code == "NOT_FOUND")
        }
    }

    // MARK: Postmark

    @Test("Postmark: a hard bounce and a spam complaint suppress, a soft bounce is ignored, with its Basic credentials only")
    func postmark() throws {
        let h = try Self.harness()
        let auth = Self.basic(Self.postmarkLine)
        let hard = #"{"RecordType":"Bounce","Type":"HardBounce","TypeCode":1,"Email":"ann@example.com","Description":"The server was unable to deliver"}"#
        #expect(try h.service.deliveryEvents.postmark(Array(hard.utf8), authorization: auth) == DeliveryEventResult(suppressed: 1, ignored: 0))
        #expect(try Self.suppression(h, "ann@example.com")?.detail == "postmark HardBounce")
        let soft = #"{"RecordType":"Bounce","Type":"SoftBounce","Email":"bob@example.com"}"#
        #expect(try h.service.deliveryEvents.postmark(Array(soft.utf8), authorization: auth) == DeliveryEventResult(suppressed: 0, ignored: 1))
        #expect(try Self.suppression(h, "bob@example.com") == nil)
        let spam = #"{"RecordType":"SpamComplaint","Type":"SpamComplaint","Email":"cy@example.com"}"#
        #expect(try h.service.deliveryEvents.postmark(Array(spam.utf8), authorization: auth) == DeliveryEventResult(suppressed: 1, ignored: 0))
        #expect(try Self.suppression(h, "cy@example.com")?.reason == .complaint)
        for wrong in [nil, Self.basic("postmark:correct-horse-battery-stapl"), Self.basic("other:correct-horse-battery-staple"), "Bearer x",
                      "Basic !!!", Self.basic(Self.postmarkLine + "x")] {
            let error = #expect(throws: AuthError.self) {
                try h.service.deliveryEvents.postmark(Array(#"{"RecordType":"Bounce","Type":"HardBounce","Email":"eve@example.com"}"#.utf8), authorization: wrong)
            }
            #expect(error?.code == "UNAUTHORIZED")
        }
        #expect(try Self.suppression(h, "eve@example.com") == nil)
        #expect(Self.count(h, .postmark, .refused) == 6)
        let notJSON = #expect(throws: AuthError.self) { try h.service.deliveryEvents.postmark(Array("x".utf8), authorization: auth) }
        #expect(notJSON?.code == "INVALID_ARGUMENT")
    }

    @Test("Postmark's credentials file: USER:PASSWORD, the password at least 16 characters; the error never echoes it")
    func postmarkCredentials() {
        for bad in ["", "nocolon-long-enough-password", ":nouser-long-enough-password", "user:short"] {
            let error = #expect(throws: SettingsError.self) { try PostmarkCredentials(line: bad) }
            #expect(error.map { !$0.message.contains("password-") && !$0.message.contains("short") } ?? false)
        }
        #expect(!"\(String(describing: try? PostmarkCredentials(line: Self.postmarkLine)))".contains("staple"))
    }

    // MARK: Standard Webhooks

    static func signed(_ body: String, id: String = "msg_\(UUID().uuidString)", at timestamp: Int64, secret: String = webhookSecret) throws
        -> (body: [UInt8], id: String, timestamp: String, signature: String)
    {
        let signature = try WebhookSecret(secret).signature(id: id, timestamp: timestamp, body: body)
        return (Array(body.utf8), id, String(timestamp), "v1,bm90IHRoaXMgb25l " + signature)
    }

    static let bounced = #"{"type":"email.bounced","created_at":"2026-12-07T05:00:00.000Z","data":{"email_id":"e-1","from":"Postern <no-reply@example.com>","to":["ann@example.com"],"subject":"Sign in","bounce":{"type":"Permanent","subType":"Suppressed","message":"550 5.1.1"}}}"#

    @Test("Standard Webhooks (Resend): email.bounced and email.complained suppress their data.to; a transient bounce and other types are ignored")
    func standardWebhooks() throws {
        let h = try Self.harness()
        let now = h.clock.unixSeconds()
        func take(_ body: String) throws -> DeliveryEventResult {
            let s = try Self.signed(body, at: now)
            return try h.service.deliveryEvents.standardWebhook(s.body, id: s.id, timestamp: s.timestamp, signature: s.signature)
        }
        #expect(try take(Self.bounced) == DeliveryEventResult(suppressed: 1, ignored: 0))
        #expect(try Self.suppression(h, "ann@example.com")?.detail == "standard-webhooks email.bounced Permanent")
        #expect(try take(#"{"type":"email.complained","data":{"to":["bob@example.com","not an address"]}}"#) == DeliveryEventResult(suppressed: 1, ignored: 1))
        #expect(try Self.suppression(h, "bob@example.com")?.reason == .complaint)
        #expect(try take(#"{"type":"email.bounced","data":{"to":["cy@example.com"],"bounce":{"type":"Transient"}}}"#) == DeliveryEventResult(suppressed: 0, ignored: 1))
        #expect(try take(#"{"type":"email.delivered","data":{"to":["cy@example.com"]}}"#) == DeliveryEventResult(suppressed: 0, ignored: 1))
        #expect(try Self.suppression(h, "cy@example.com") == nil)
    }

    @Test("Standard Webhooks refuses with 401: a replayed webhook-id, a stale or future timestamp, another secret, a changed body, a missing header")
    func standardWebhookAttacks() throws {
        let h = try Self.harness()
        let now = h.clock.unixSeconds()
        let intake = h.service.deliveryEvents
        let good = try Self.signed(Self.bounced, at: now)
        #expect(try intake.standardWebhook(good.body, id: good.id, timestamp: good.timestamp, signature: good.signature).suppressed == 1)
        let eve = Self.bounced.replacingOccurrences(of: "ann@", with: "eve@")
        let otherSecret = "whsec_" + Data(repeating: 0x43, count: 32).base64EncodedString()
        let stale = try Self.signed(eve, at: now - 301)
        let future = try Self.signed(eve, at: now + 301)
        let wrongKey = try Self.signed(eve, at: now, secret: otherSecret)
        let fresh = try Self.signed(eve, at: now)
        let attacks: [(String, () throws -> DeliveryEventResult)] = [
            ("replay", { try intake.standardWebhook(Array(Self.bounced.utf8), id: good.id, timestamp: good.timestamp, signature: good.signature) }),
            ("stale", { try intake.standardWebhook(stale.body, id: stale.id, timestamp: stale.timestamp, signature: stale.signature) }),
            ("future", { try intake.standardWebhook(future.body, id: future.id, timestamp: future.timestamp, signature: future.signature) }),
            ("other secret", { try intake.standardWebhook(wrongKey.body, id: wrongKey.id, timestamp: wrongKey.timestamp, signature: wrongKey.signature) }),
            ("changed body", { try intake.standardWebhook(Array(eve.utf8), id: good.id + "x", timestamp: good.timestamp, signature: good.signature) }),
            ("other id", { try intake.standardWebhook(fresh.body, id: fresh.id + "x", timestamp: fresh.timestamp, signature: fresh.signature) }),
            ("other timestamp", { try intake.standardWebhook(fresh.body, id: fresh.id, timestamp: String(now + 1), signature: fresh.signature) }),
            ("no signature", { try intake.standardWebhook(fresh.body, id: fresh.id, timestamp: fresh.timestamp, signature: nil) }),
            ("no id", { try intake.standardWebhook(fresh.body, id: nil, timestamp: fresh.timestamp, signature: fresh.signature) }),
            ("huge timestamp", { try intake.standardWebhook(fresh.body, id: fresh.id, timestamp: "-9223372036854775808", signature: fresh.signature) }),
        ]
        for (name, attack) in attacks {
            let error = #expect(throws: AuthError.self, "\(name)") { try attack() }
            #expect(error?.code == "UNAUTHORIZED", "\(name)")
        }
        #expect(try Self.suppression(h, "eve@example.com") == nil)
        // The refusals wrote nothing: the fresh event still goes through, once.
        #expect(try intake.standardWebhook(fresh.body, id: fresh.id, timestamp: fresh.timestamp, signature: fresh.signature).suppressed == 1)
        #expect(Self.count(h, .standardWebhooks, .refused) == attacks.count)
    }
}
