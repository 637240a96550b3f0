import PosternCore
import Testing

@Suite("Webhook signatures and outcomes")
struct WebhookSignatureTests {
    /// The Standard Webhooks specification's test vector (the reference libraries' `sign` tests).
    static let specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test("the signature reproduces the Standard Webhooks spec's test vector")
    func specVector() throws {
        let secret = try WebhookSecret(Self.specSecret)
        #expect(
            secret.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#)
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("during a rotation each attempt carries one signature per secret, space-separated")
    func rotation() throws {
        let secrets = try WebhookSecret.list("# rotating\n\(Self.specSecret)\n\nwhsec_\(String(repeating: "A", count: 32))\n")
        #expect(secrets.count == 2)
        let headers = WebhookSignedHeaders(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#, secrets: secrets)
        let parts = headers.signature.split(separator: " ")
        #expect(parts.count == 2)
        #expect(parts.first == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(parts.allSatisfy { $0.hasPrefix("v1,") })
        #expect(headers.lines == [
            "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp: 1614265330", "webhook-signature: \(headers.signature)",
        ])
    }

    @Test("secrets without whsec_, not base64, or of a key too short are refused without echoing them", arguments: [
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!", "whsec_c2hvcnQ=",
    ])
    func badSecrets(text: String) {
        #expect(throws: SettingsError.self) { try WebhookSecret(text) }
        do { _ = try WebhookSecret.list("\(Self.specSecret)\n\(text)") } catch {
            #expect(error.message.hasPrefix("line 2:"))
            #expect(!error.message.contains(text))
        }
    }

    @Test("any 2xx is delivered, 410 is for good, every other status or none is retried", arguments: [
        (200, "sent"), (202, "sent"), (204, "sent"), (299, "sent"), (410, "permanent"), (0, "transient"), (301, "transient"),
        (400, "transient"), (404, "transient"), (429, "transient"), (500, "transient"), (503, "transient"),
    ])
    func classification(status: Int, expected: String) {
        let kind: String
        switch WebhookResponse(status: status, reply: "HTTP \(status)").outcome {
        case .sent: kind = "sent"
        case .permanent: kind = "permanent"
        case .transient: kind = "transient"
        }
        #expect(kind == expected)
    }

    @Test("Retry-After in seconds postpones the retry past the backoff, capped at the policy's longest delay")
    func retryAfter() {
        #expect(WebhookResponse.retryAfterSeconds(" 120 ") == 120)
        #expect(WebhookResponse.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        #expect(WebhookResponse.retryAfterSeconds("-3") == nil)
        let policy = DeliveryPolicy(baseDelay: 5, maximumDelay: 600, maximumAge: 86_400, lease: 60)
        func retryAt(_ retryAfter: Int64?) -> Int64? {
            var life = DeliveryStateMachine(state: .claimed(owner: "w", until: 1060), deadline: 100_000, policy: policy)
            if case .retry(let at, _) = life.attempted(.transient(reply: "HTTP 503", connectionFailed: false), now: 1000, jitter: 0, retryAfter: retryAfter) {
                return at
            }
            return nil
        }
        #expect(retryAt(nil) == 1005)
        #expect(retryAt(120) == 1120)
        #expect(retryAt(1) == 1005)
        #expect(retryAt(86_400) == 1600)
    }

    @Test("the body is the Standard Webhooks envelope with sorted keys and an ISO 8601 time")
    func body() throws {
        let body = WebhookEvent.userMigrated(fromUid: "anon", toUid: "kept").body(at: 1_614_265_330)
        #expect(body == #"{"data":{"fromUid":"anon","toUid":"kept"},"timestamp":"2021-02-25T15:02:10Z","type":"user.migrated"}"#)
    }
}
