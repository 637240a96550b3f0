import Foundation
import PosternCore
@testable import PosternMail
import PosternTestSupport
import Synchronization
import Testing

/// A transport that answers from a script and records what it was given.
final class ScriptedSMSTransport: SMSTransport {
    var answers: [SMSResponse]
    var sent: [OutgoingSMS] = []
    init(_ answers: [SMSResponse]) { self.answers = answers }
    func send(_ sms: OutgoingSMS) -> SMSResponse {
        sent.append(sms)
        return answers.isEmpty ? SMSResponse(status: 201, reply: "HTTP 201") : answers.removeFirst()
    }
}

/// Composes only test messages; `nil` for the others (a claim that is gone).
struct TestComposer: SMSComposing {
    func composeSMS(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        if case .test = intent { return SMSContent(kind: .test, code: "000000") }
        return nil
    }
}

@Suite("The SMS worker: the outbox's delivery life over the SMS queue")
struct SMSWorkerTests {
    let store = InMemoryStore()
    let clock = ManualClock()
    let metrics = SMSMetrics()
    let number: PhoneNumber

    init() throws { number = try PhoneNumber.parse("+4915112345678", defaultRegion: nil) }

    func worker() throws -> SMSWorker {
        let renderer = try TemplateSet(sources: BundledTemplates.sources()).smsRenderer(branding: Branding(appName: "Postern"), host: "auth.example.com")
        return SMSWorker(
            store: store, policy: DeliveryPolicy(baseDelay: 10, maximumDelay: 300, maximumAge: 900, lease: 60), composer: TestComposer(),
            renderer: renderer, transport: { ScriptedSMSTransport([]) }, clock: clock, metrics: metrics,
            logger: Logger(label: "test", sink: { _ in }))
    }

    func enqueue(_ intent: SMSIntent = .test(reference: "t"), giveUp: Int64 = 600) throws -> Int64 {
        let (number, now) = (self.number, clock.unixSeconds())
        return try store.write { try $0.enqueueSMS(intent, recipient: number, now: now, giveUpAt: now + giveUp) }
    }

    func message(_ id: Int64) throws -> SMSMessage? { try store.read { try $0.smsMessage(id: id) } }

    @Test("503 then 201: retried with backoff, then sent exactly once; the text ends with the origin-bound line")
    func retryThenSent() throws {
        let worker = try worker()
        let id = try enqueue()
        let transport = ScriptedSMSTransport([SMSResponse(status: 503, reply: "HTTP 503"), SMSResponse(status: 201, providerID: "SM1", reply: "HTTP 201 SM1")])
        #expect(worker.deliverDue(transport: transport) == 1)
        let retrying = try #require(try message(id))
        #expect(retrying.state == .retrying && retrying.attempts == 1 && retrying.lastReply == "HTTP 503")
        #expect(worker.deliverDue(transport: transport) == 0, "not due before its backoff")
        clock.advance(by: 10)
        #expect(worker.deliverDue(transport: transport) == 1)
        let sent = try #require(try message(id))
        #expect(sent.state == .sent && sent.lastReply == "HTTP 201 SM1" && sent.recipient == nil)
        #expect(transport.sent.count == 2)
        #expect(transport.sent.allSatisfy { $0.to == number && $0.reference == "sms_\(id)" }, "the same reference on every attempt")
        #expect(transport.sent[1].body.hasSuffix("\n\n@auth.example.com #000000"))
        clock.advance(by: 1000)
        #expect(worker.deliverDue(transport: transport) == 0)
        #expect(transport.sent.count == 2, "sent once, never again")
        #expect(metrics.snapshot().map { "\($0.event) \($0.country) \($0.count)" } == ["sent 49 1"])
    }

    @Test("a 4xx is dead at once with the provider's code kept; a 429 waits for its Retry-After")
    func deadAndRetryAfter() throws {
        let worker = try worker()
        let bad = try enqueue()
        let throttled = try enqueue()
        let transport = ScriptedSMSTransport([
            SMSResponse(status: 400, providerCode: "21211", reply: "HTTP 400 code 21211"),
            SMSResponse(status: 429, retryAfter: 120, reply: "HTTP 429"),
        ])
        #expect(worker.deliverDue(transport: transport) == 2)
        let dead = try #require(try message(bad))
        #expect(dead.state == .dead && dead.lastReply == "HTTP 400 code 21211" && dead.recipient == nil)
        let waiting = try #require(try message(throttled))
        #expect(waiting.state == .retrying && waiting.nextAttemptAt == clock.unixSeconds() + 120)
        #expect(metrics.snapshot().map { "\($0.event) \($0.country) \($0.count)" } == ["dead 49 1"])
    }

    @Test("a code past its expiry is not sent late; an intent with nothing to say is finished unsent")
    func expiredAndNothing() throws {
        let worker = try worker()
        let expired = try enqueue(giveUp: 30)
        let gone = try enqueue(.phoneClaim(claimID: "c_gone"))
        clock.advance(by: 31)
        let transport = ScriptedSMSTransport([])
        #expect(worker.deliverDue(transport: transport) == 2)
        #expect(transport.sent.isEmpty)
        #expect(try message(expired)?.state == .dead)
        #expect(try message(gone)?.state == .sent && message(gone)?.lastReply == "nothing to send")
    }

    @Test("the started worker wakes on the store's doorbell and sends without waiting for its poll")
    func doorbell() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sms-\(UUID().uuidString)")
        let renderer = try TemplateSet(sources: BundledTemplates.sources()).smsRenderer(branding: Branding(appName: "P"), host: "h.example")
        // The poll and the heartbeat wait on a manual clock that never moves: only the doorbell
        // can wake the worker.
        let monotonic = ManualMonotonicClock()
        let worker = SMSWorker(
            store: store, policy: .standard, composer: TestComposer(), renderer: renderer,
            transport: { try DirectorySMSTransport(directory: directory.path) }, clock: SystemClock(), metrics: metrics,
            pollInterval: .seconds(3600), monotonic: monotonic, logger: Logger(label: "test", sink: { _ in }))
        worker.start()
        defer { worker.stop() }
        // Idle: the worker looked once, found nothing and waits for its poll, beside its heartbeat
        // (a message queued before its first look would be sent without the doorbell).
        #expect(monotonic.waitUntilSettled(waiters: 2))
        let (number, now) = (self.number, SystemClock().unixSeconds())
        let id = try store.write { try $0.enqueueSMS(.test(reference: "bell"), recipient: number, now: now, giveUpAt: now + 600) }
        #expect(try eventually { try message(id)?.state == .sent })
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(files.count == 1)
        let record = try JSONDecoder().decode([String: String].self, from: Data(contentsOf: directory.appendingPathComponent(files[0])))
        #expect(record["to"] == "+4915112345678" && record["body"]?.hasSuffix("@h.example #000000") == true)
    }

    @Test("Twilio's answers: the sid on success, the error code on failure, nothing else of the body kept")
    func twilioAnswers() {
        let ok = TwilioSMSTransport.response(status: 201, retryAfter: nil, body: Array(#"{"sid":"SM0123456789abcdef","to":"+4915112345678","body":"x"}"#.utf8))
        #expect(ok.reply == "HTTP 201 SM0123456789abcdef" && ok.outcome == .sent(reply: ok.reply))
        let bad = TwilioSMSTransport.response(status: 400, retryAfter: nil, body: Array(#"{"code":21211,"message":"The 'To' number +4915112345678 is not valid.","status":400}"#.utf8))
        #expect(bad.reply == "HTTP 400 code 21211" && bad.providerCode == "21211")
        #expect(!bad.reply.contains("4915112345678"), "Twilio's message echoes the number: not kept")
        #expect(bad.outcome == .permanent(reply: "HTTP 400 code 21211"))
        let weird = TwilioSMSTransport.response(status: 400, retryAfter: nil, body: Array(#"{"code":"21211\r\nX-Evil: 1"}"#.utf8))
        #expect(weird.reply == "HTTP 400", "a code that is not a plain token is dropped")
        #expect(TwilioSMSTransport.response(status: 503, retryAfter: 5, body: []).outcome == .transient(reply: "HTTP 503", connectionFailed: false))
        #expect(SMSResponse(status: 429, reply: "r").outcome == .transient(reply: "r", connectionFailed: false))
        #expect(SMSResponse(status: 0, reply: "r").outcome == .transient(reply: "r", connectionFailed: true))
        #expect(SMSResponse(status: 401, reply: "r").outcome == .permanent(reply: "r"))
    }

    @Test("the form body escapes everything but unreserved characters (+, &, = and newlines included)")
    func formEncoding() {
        let body = TwilioSMSTransport.formEncoded([("To", "+4915112345678"), ("Body", "a&b=c d\n@h #1")])
        #expect(body == "To=%2B4915112345678&Body=a%26b%3Dc%20d%0A%40h%20%231")
    }
}
