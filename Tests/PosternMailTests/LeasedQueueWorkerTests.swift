import Foundation
import PosternCore
@testable import PosternMail
import PosternTestSupport
import Synchronization
import Testing

/// The in-memory store, with writes that fail on demand: `claims` fails the claim (a `write`),
/// `outcomes` runs an outcome's write (`writeSyncingLater`) in full, then fails it, so that
/// everything it did is rolled back.
final class FlakyStore: Store {
    struct Injected: Error, CustomStringConvertible {
        var description: String { "disk I/O error (injected)" }
    }

    let inner = InMemoryStore()
    let claims = Mutex(false)
    let outcomes = Mutex(false)
    var mailDoorbell: MailDoorbell { inner.mailDoorbell }

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T { try inner.read(body) }

    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        if claims.withLock({ $0 }) { throw Injected() }
        return try inner.write(body)
    }

    func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        guard outcomes.withLock({ $0 }) else { return try inner.write(body) }
        return try inner.write { tx -> T in
            _ = try body(tx)
            throw Injected()
        }
    }
}

/// The log lines a test's logger wrote.
final class LogLines: Sendable {
    let value = Mutex<[String]>([])
}

/// What the SMS and webhook workers share (``LeasedQueueWorker``): a claim the
/// store refuses claims nothing, an outcome it refuses leaves the row claimed until its lease
/// ends (then it is tried again), and both say so in the log under the queue's word.
@Suite("The queue workers' claim and outcomes")
struct LeaseQueueTests {
    let store = FlakyStore()
    let clock = ManualClock()
    let lines = LogLines()
    static let policy = DeliveryPolicy(baseDelay: 10, maximumDelay: 300, maximumAge: 900, lease: 60)
    static let endpoint = "https://hooks.example.com/a"

    var logger: Logger {
        let lines = self.lines
        return Logger(label: "test", sink: { line in lines.value.withLock { $0.append(line) } })
    }

    func logged(_ message: String) -> Bool { lines.value.withLock { $0.contains { $0.contains(#""msg":"\#(message)""#) } } }

    func smsWorker(metrics: SMSMetrics) throws -> (SMSWorker, Int64) {
        let renderer = try TemplateSet(sources: BundledTemplates.sources()).smsRenderer(branding: Branding(appName: "Postern"), host: "auth.example.com")
        let worker = SMSWorker(
            store: store, policy: Self.policy, composer: TestComposer(), renderer: renderer, transport: { ScriptedSMSTransport([]) },
            clock: clock, metrics: metrics, logger: logger)
        let (number, now) = (try PhoneNumber.parse("+4915112345678", defaultRegion: nil), clock.unixSeconds())
        let id = try store.write { try $0.enqueueSMS(.test(reference: "t"), recipient: number, now: now, giveUpAt: now + 600) }
        return (worker, id)
    }

    func webhookWorker(metrics: WebhookMetrics) throws -> WebhookWorker {
        let worker = WebhookWorker(
            store: store, configuration: WebhookConfiguration(endpoints: [Self.endpoint], policy: Self.policy),
            secrets: [try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")], transport: { ScriptedWebhookTransport([]) },
            clock: clock, metrics: metrics, logger: logger)
        let now = clock.unixSeconds()
        try store.write { tx in
            try tx.enqueueWebhook(
                webhookID: "msg_one", eventType: "user.deleted", body: #"{"data":{}}"#, endpoints: [Self.endpoint], now: now,
                giveUpAt: now + 900)
        }
        return worker
    }

    @Test("a claim the store refuses: nothing claimed or sent, 'sms claim failed' / 'webhook claim failed'; the next claim takes it")
    func claimRefused() throws {
        let (sms, id) = try smsWorker(metrics: SMSMetrics())
        let webhooks = try webhookWorker(metrics: WebhookMetrics())
        let (texts, posts) = (ScriptedSMSTransport([]), ScriptedWebhookTransport([]))
        store.claims.withLock { $0 = true }
        #expect(sms.deliverDue(transport: texts) == 0)
        #expect(webhooks.deliverDue(transport: posts) == 0)
        #expect(texts.sent.isEmpty && posts.received.isEmpty)
        #expect(logged("sms claim failed") && logged("webhook claim failed"))
        #expect(try store.read { try $0.smsMessage(id: id) }?.state == .queued)
        #expect(store.inner.snapshot().webhooks[0].state == .queued)
        store.claims.withLock { $0 = false }
        #expect(sms.deliverDue(transport: texts) == 1 && webhooks.deliverDue(transport: posts) == 1)
        #expect(texts.sent.count == 1 && posts.received.count == 1)
    }

    @Test("an SMS outcome the store refuses: 'sms outcome not recorded', no 'sms sent', no count; claimed until the lease ends, then sent again")
    func smsOutcomeRefused() throws {
        let metrics = SMSMetrics()
        let (worker, id) = try smsWorker(metrics: metrics)
        let transport = ScriptedSMSTransport([])
        store.outcomes.withLock { $0 = true }
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(transport.sent.count == 1)
        #expect(logged("sms outcome not recorded") && !logged("sms sent"))
        #expect(metrics.snapshot().isEmpty)
        let held = try #require(try store.read { try $0.smsMessage(id: id) })
        #expect(held.state == .claimed && held.recipient != nil)
        store.outcomes.withLock { $0 = false }
        #expect(worker.deliverDue(transport: transport) == 0, "still leased")
        clock.advance(by: 60)
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(try store.read { try $0.smsMessage(id: id) }?.state == .sent)
        #expect(transport.sent.count == 2 && logged("sms sent"))
    }

    @Test("a 410 whose outcome the store refuses disables nothing (one transaction with the dead mark); the retry disables it")
    func goneOutcomeRefused() throws {
        let metrics = WebhookMetrics()
        let worker = try webhookWorker(metrics: metrics)
        let transport = ScriptedWebhookTransport([WebhookResponse(status: 410, reply: "HTTP 410"), WebhookResponse(status: 410, reply: "HTTP 410")])
        store.outcomes.withLock { $0 = true }
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(logged("webhook outcome not recorded") && !logged("webhook endpoint disabled (410 Gone)"))
        #expect(try store.read { try $0.disabledWebhookEndpoints() }.isEmpty)
        #expect(store.inner.snapshot().webhooks[0].state == .claimed)
        store.outcomes.withLock { $0 = false }
        clock.advance(by: 60)
        #expect(worker.deliverDue(transport: transport) == 1)
        #expect(try store.read { try $0.disabledWebhookEndpoints() } == [Self.endpoint])
        #expect(store.inner.snapshot().webhooks[0].state == .dead && logged("webhook endpoint disabled (410 Gone)"))
    }
}
