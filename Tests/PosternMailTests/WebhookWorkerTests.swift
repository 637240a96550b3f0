import Foundation
import PosternCore
import PosternMail
import PosternTestSupport
import Testing

/// A receiver that answers from a script and records what it got.
final class ScriptedWebhookTransport: WebhookTransport {
    var answers: [WebhookResponse]
    var received: [(url: String, headers: WebhookSignedHeaders, body: String)] = []

    init(_ answers: [WebhookResponse]) { self.answers = answers }

    func post(url: String, headers: WebhookSignedHeaders, body: String) -> WebhookResponse {
        received.append((url, headers, body))
        return answers.isEmpty ? WebhookResponse(status: 204, reply: "HTTP 204") : answers.removeFirst()
    }
}

@Suite("The webhook worker")
struct WebhookWorkerTests {
    static let endpoint = "https://hooks.example.com/a"

    static func worker(_ store: InMemoryStore, clock: ManualClock) throws -> WebhookWorker {
        WebhookWorker(
            store: store, configuration: WebhookConfiguration(endpoints: [endpoint], policy: DeliveryPolicy(baseDelay: 5, maximumDelay: 600, maximumAge: 3600, lease: 60)),
            secrets: [try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")], transport: { ScriptedWebhookTransport([]) },
            clock: clock, logger: Logger(label: "test", sink: { _ in }))
    }

    static func enqueue(_ store: InMemoryStore, id: String, now: Int64) throws {
        try store.write { tx in
            try tx.enqueueWebhook(webhookID: id, eventType: "user.deleted", body: #"{"data":{}}"#, endpoints: [endpoint], now: now, giveUpAt: now + 3600)
        }
    }

    @Test("a failed attempt is retried after the backoff, not before Retry-After, with the same webhook-id and a fresh signature")
    func retries() throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let worker = try Self.worker(store, clock: clock)
        let now = clock.unixSeconds()
        try Self.enqueue(store, id: "msg_one", now: now)
        let transport = ScriptedWebhookTransport([
            WebhookResponse(status: 503, retryAfter: 30, reply: "HTTP 503"), WebhookResponse(status: 202, reply: "HTTP 202"),
        ])
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(store.snapshot().webhooks[0].state == .retrying)
        #expect(store.snapshot().webhooks[0].nextAttemptAt == now + 30)
        clock.advance(by: 29)
        #expect(worker.deliverDue(transport: transport) == 0)
        clock.advance(by: 1)
        #expect(worker.deliverDue(transport: transport) == 1)
        let row = store.snapshot().webhooks[0]
        #expect(row.state == .sent && row.attempts == 2 && row.lastReply == "HTTP 202")
        #expect(transport.received.map(\.headers.id) == ["msg_one", "msg_one"])
        #expect(transport.received[1].headers.timestamp == transport.received[0].headers.timestamp + 30)
        #expect(transport.received.allSatisfy { $0.headers.signature.hasPrefix("v1,") && $0.body == #"{"data":{}}"# })
    }

    @Test("410 Gone disables the endpoint: its other deliveries are abandoned unsent and nothing more is queued for it")
    func gone() throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let worker = try Self.worker(store, clock: clock)
        let now = clock.unixSeconds()
        try Self.enqueue(store, id: "msg_one", now: now)
        clock.advance(by: 1)
        try Self.enqueue(store, id: "msg_two", now: now + 1)
        let transport = ScriptedWebhookTransport([WebhookResponse(status: 410, reply: "HTTP 410")])
        #expect(worker.deliverDue(transport: transport) == 2)
        #expect(transport.received.count == 1)
        #expect(store.snapshot().webhooks.map(\.state) == [.dead, .dead])
        #expect(try store.read { try $0.disabledWebhookEndpoints() } == [Self.endpoint])
        try Self.enqueue(store, id: "msg_three", now: now + 2)
        #expect(store.snapshot().webhooks.count == 2)
    }

    @Test("a claim whose worker died is taken again after its lease, with the same webhook-id")
    func leaseRunsOut() throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let worker = try Self.worker(store, clock: clock)
        let now = clock.unixSeconds()
        try Self.enqueue(store, id: "msg_one", now: now)
        _ = try store.write { tx in
            try tx.claimDue(.webhooks, owner: "dead-worker", now: now, leaseUntil: now + 60, limit: 1, claimable: DeliveryStateMachine.claimableStates)
        }
        let transport = ScriptedWebhookTransport([])
        #expect(worker.deliverDue(transport: transport) == 0)
        clock.advance(by: 60)
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(transport.received.map(\.headers.id) == ["msg_one"])
        #expect(store.snapshot().webhooks[0].state == .sent)
    }
}
