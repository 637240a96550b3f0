import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing
@testable import PosternMail

/// A transport that answers from a script per recipient and records what it was given: the
/// worker pool's I/O edge, so the pool's own decisions can be watched.
final class ScriptedTransport: MailTransport, @unchecked Sendable {
    /// What each recipient's sends answer, in order; past the end, `.sent`.
    static let scripts = Mutex<[String: [DeliveryOutcome]]>([:])
    /// Every delivery, by recipient, in order.
    static let delivered = Mutex<[String]>([])
    /// Held before answering, so a test can stop the pool mid-send.
    static let gate = Mutex<Bool>(true)

    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
        while !Self.gate.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.005) }
        let recipient = mail.envelope.recipients.first ?? ""
        Self.delivered.withLock { $0.append(recipient) }
        return Self.scripts.withLock { scripts in
            guard var script = scripts[recipient], !script.isEmpty else { return .sent(reply: "250 ok") }
            let next = script.removeFirst()
            scripts[recipient] = script
            return next
        }
    }

    func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        guard gate() else { return .transient(reply: "abandoned", connectionFailed: false) }
        return deliver(mail)
    }

    func close() {}
}

/// Sends at once and notes, at each end of data (the gate passed), how many of the messages it
/// sent before are not yet recorded as sent in the store.
final class CommitWatchingTransport: MailTransport, @unchecked Sendable {
    let store: InMemoryStore
    let uncommittedAtEnd = Mutex<[Int]>([])
    private let sentBefore = Mutex<[String]>([])

    init(store: InMemoryStore) { self.store = store }

    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome { deliver(mail) { true } }

    func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        guard gate() else { return .transient(reply: "abandoned", connectionFailed: false) }
        let sent = Set(store.snapshot().outbox.filter { $0.state == .sent }.map(\.recipient.address))
        let before = sentBefore.withLock { $0 }
        uncommittedAtEnd.withLock { $0.append(before.filter { !sent.contains($0) }.count) }
        sentBefore.withLock { $0.append(mail.envelope.recipients.first ?? "") }
        return .sent(reply: "250 ok")
    }

    func close() {}
}

/// The outbox worker pool itself, over the in-memory store with a scripted transport: what it
/// claims, sends, retries, gives up and gives back. (The SMTP transports have their own tests,
/// and the integration scripts drive the pool against real servers.)
@Suite("the outbox worker pool", .serialized)
struct OutboxWorkerPoolTests {
    let store = InMemoryStore()
    let clock = ManualClock()

    init() {
        ScriptedTransport.scripts.withLock { $0 = [:] }
        ScriptedTransport.delivered.withLock { $0 = [] }
        ScriptedTransport.gate.withLock { $0 = true }
    }

    func pool(
        workers: Int = 2, compose: OutboxWorkerPool.Compose? = nil, events: EventLedger? = nil, deliveryLog: DeliveryLog? = nil,
        transport: @escaping MailTransportFactory = { ScriptedTransport() }
    ) -> OutboxWorkerPool {
        let composeMail = compose ?? OutboxWorkerPool.composingEach { message in
            OutgoingMail(
                storedMessageID: "<\(message.id)@test>", envelope: MailEnvelope(sender: "s@example.com", recipients: [message.recipient.address]),
                bytes: Array("Subject: \(message.id)\r\n\r\nhello\r\n".utf8))
        }
        return OutboxWorkerPool(
            store: store, transport: transport, compose: composeMail, clock: clock, random: { 0 },
            configuration: .init(workers: workers, policy: DeliveryPolicy(baseDelay: 30, maximumDelay: 60, maximumAge: 3_600, lease: 150),
                                 batchSize: 8, pollInterval: 0.02, wakeJitter: 0, events: events, deliveryLog: deliveryLog))
    }

    @discardableResult
    func queue(_ address: String) throws -> Int64 {
        let now = clock.unixSeconds()
        return try store.write { tx in
            try tx.enqueue(.passwordChanged(uid: address), recipient: try EmailAddress.parse(address), now: now, giveUpAt: now + 3_600)
        }
    }

    func states() throws -> [OutboxState] {
        try store.read { try $0.outboxMessages(state: nil, limit: 1_000) }.map(\.state)
    }

    @Test("every queued message is sent exactly once across the workers")
    func sendsEachOnce() throws {
        for index in 0..<40 { try queue("r\(index)@example.com") }
        let workers = pool(workers: 3)
        workers.start()
        #expect(try eventually { try states().filter { $0 == .sent }.count == 40 }, "40 sent")
        #expect(workers.stop(timeout: 10))
        let delivered = ScriptedTransport.delivered.withLock { $0 }
        #expect(delivered.count == 40 && Set(delivered).count == 40)
    }

    @Test("a transient failure waits out its backoff on the pool's clock, then the message goes")
    func transientThenSent() throws {
        ScriptedTransport.scripts.withLock { $0["later@example.com"] = [.transient(reply: "451 busy", connectionFailed: false)] }
        try queue("later@example.com")
        let workers = pool()
        workers.start()
        #expect(try eventually { try states() == [.retrying] }, "the retry state")
        // Not before the backoff: the clock has not moved, so the message waits. The workers look
        // again every poll (20 ms); any claim made after the retry was recorded would have taken
        // a message claimable before its backoff, and here they made four more.
        let claims = store.outboxClaims.count
        #expect(eventually { store.outboxClaims.count > claims + 2 * 2 }, "the workers looked again")
        #expect(try states() == [.retrying])
        clock.advance(by: 31)
        #expect(try eventually { try states() == [.sent] }, "sent after the backoff")
        #expect(workers.stop(timeout: 10))
        #expect(ScriptedTransport.delivered.withLock { $0 } == ["later@example.com", "later@example.com"])
        #expect(try store.read { try $0.outboxMessages(state: nil, limit: 1) }.first?.attempts == 2)
    }

    @Test("mail.deferred, mail.sent and mail.failed are queued with the outcome that causes them, the address only in mail.failed")
    func mailEvents() throws {
        let hooks = "https://hooks.example/in"
        ScriptedTransport.scripts.withLock {
            $0["later@example.com"] = [.transient(reply: "451 busy", connectionFailed: false)]
            $0["gone@example.com"] = [.permanent(reply: "550 no such user")]
        }
        let later = try queue("later@example.com")
        let gone = try queue("gone@example.com")
        let workers = pool(workers: 1, events: EventLedger(configuration: WebhookConfiguration(endpoints: [hooks])))
        workers.start()
        #expect(try eventually { try states().sorted { $0.rawValue < $1.rawValue } == [.dead, .retrying] }, "deferred and dead")
        clock.advance(by: 31)
        #expect(try eventually { try states().contains(.sent) }, "sent after the backoff")
        #expect(workers.stop(timeout: 10))
        let events = store.snapshot().webhooks
        #expect(events.allSatisfy { $0.endpoint == hooks })
        func body(_ type: String) throws -> [String: Any] {
            let row = try #require(events.first { $0.eventType == type })
            return try #require(try JSONSerialization.jsonObject(with: Data(row.body.utf8)) as? [String: Any])["data"] as? [String: Any] ?? [:]
        }
        #expect(events.map(\.eventType).sorted() == ["mail.deferred", "mail.failed", "mail.sent"])
        let deferred = try body("mail.deferred")
        #expect(deferred["messageId"] as? Int64 == later && deferred["attempts"] as? Int == 1 && deferred["retryAt"] is String)
        #expect(deferred["email"] == nil)
        let sent = try body("mail.sent")
        #expect(sent["messageId"] as? Int64 == later && sent["attempts"] as? Int == 2 && sent["email"] == nil)
        let failed = try body("mail.failed")
        #expect(failed["messageId"] as? Int64 == gone && failed["email"] as? String == "gone@example.com")
        #expect(failed["kind"] as? String == "password-changed" && sent["kind"] as? String == "password-changed")
    }

    @Test("the delivery log records each attempt with its transport, code, cleaned reply and outcome, in the outcome's transaction")
    func deliveryLog() throws {
        ScriptedTransport.scripts.withLock {
            $0["later@example.com"] = [.transient(reply: "451 4.3.0 <later@example.com> busy", connectionFailed: false)]
        }
        let key = try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 9, count: 32)))
        let id = try queue("later@example.com")
        let workers = pool(workers: 1, deliveryLog: DeliveryLog(key: key, transport: "smtp://mail.example:25"))
        workers.start()
        #expect(try eventually { try states() == [.retrying] }, "the retry state")
        clock.advance(by: 31)
        #expect(try eventually { try states() == [.sent] }, "sent after the backoff")
        #expect(workers.stop(timeout: 10))
        let log = try store.read { try $0.outboxAttempts(messageID: id) }
        #expect(log.map(\.outcome) == [.deferred, .sent])
        #expect(log.map(\.replyCode) == [451, 250])
        #expect(log.map(\.reply) == ["451 4.3.0 <address> busy", "250 ok"])
        #expect(log.allSatisfy { $0.transport == "smtp://mail.example:25" && $0.recipientHash == key.hash(try! EmailAddress.parse("later@example.com")) })
        #expect(log[1].attemptedAt - log[0].attemptedAt >= 31)
        #expect(try store.read { try $0.outboxMessageIDs(recipientHash: key.hash(try EmailAddress.parse("LATER@example.com")), limit: 5) } == [id])
    }

    @Test("a permanent failure is dead at once and suppresses the address")
    func permanent() throws {
        ScriptedTransport.scripts.withLock { $0["gone@example.com"] = [.permanent(reply: "550 no such user")] }
        try queue("gone@example.com")
        let workers = pool()
        workers.start()
        #expect(try eventually { try states() == [.dead] }, "dead")
        #expect(try store.read { try $0.outboxMessages(state: .dead, limit: 1) }.first?.lastReply == "550 no such user")
        // The next mail to it is not sent.
        try queue("gone@example.com")
        #expect(try eventually { try states().allSatisfy { $0 == .dead || $0 == .sent } && states().count == 2 }, "the second finished")
        #expect(workers.stop(timeout: 10))
        #expect(ScriptedTransport.delivered.withLock { $0 } == ["gone@example.com"])
    }

    @Test("nothing to say: a message composed to nil is finished unsent")
    func composedToNothing() throws {
        try queue("nothing@example.com")
        let workers = pool(compose: OutboxWorkerPool.composingEach { _ in nil })
        workers.start()
        #expect(try eventually { try states() == [.sent] }, "finished")
        #expect(workers.stop(timeout: 10))
        #expect(ScriptedTransport.delivered.withLock { $0 }.isEmpty)
    }

    @Test("a message is completed while the outcomes of the two before it are being committed, never of three before it, across batches too")
    func recordsInFlight() throws {
        // Each commit takes 30 ms, each send none: were the final "." not held back, the records
        // of several messages before it would still be uncommitted at each end of data. 20
        // messages are three claims of 8: the last records of a batch are carried over and
        // committed with the next claim, and the first message after it waits for them.
        store.commitDelay.withLock { $0 = 0.03 }
        let ids = try (0..<20).map { try queue("f\($0)@example.com") }
        let watcher = CommitWatchingTransport(store: store)
        let workers = pool(workers: 1, transport: { watcher })
        workers.start()
        #expect(try eventually { try states().allSatisfy { $0 == .sent } }, "all sent")
        #expect(workers.stop(timeout: 10))
        let seen = watcher.uncommittedAtEnd.withLock { $0 }
        #expect(seen.count == ids.count)
        // At most recordsInFlight sent-but-unrecorded messages (this one and the two before it).
        #expect(OutboxWorker.recordsInFlight == 3)
        #expect(seen.allSatisfy { $0 <= 2 }, "uncommitted records before each end of data: \(seen)")
        #expect(seen.contains(2), "records are committed while the next messages go: \(seen)")
    }

    @Test("stop lets the send in flight finish and be recorded, and gives back what was not started")
    func stopMidBatch() throws {
        ScriptedTransport.gate.withLock { $0 = false }
        for index in 0..<6 { try queue("s\(index)@example.com") }
        let workers = pool(workers: 1)
        workers.start()
        #expect(try eventually { try states().contains(.claimed) }, "a claim")
        let stopped = Thread.detachNewThreadAndWait { workers.stop(timeout: 10) }
        #expect(eventually { workers.isStopping }, "the stop is under way")
        ScriptedTransport.gate.withLock { $0 = true }
        #expect(stopped())
        let final = try states()
        let sent = final.filter { $0 == .sent }.count
        #expect(sent == ScriptedTransport.delivered.withLock { $0.count }, "every send is recorded")
        #expect(sent >= 1 && sent < 6, "the one in flight finished; the rest were not started")
        #expect(!final.contains(.claimed), "no claim is left held: \(final)")
        // Another pool picks the rest up.
        let next = pool(workers: 1)
        next.start()
        #expect(try eventually { try states().allSatisfy { $0 == .sent } }, "all sent")
        #expect(next.stop(timeout: 10))
        #expect(Set(ScriptedTransport.delivered.withLock { $0 }).count == 6)
    }
}

extension Thread {
    /// Runs `body` on a new thread; the returned function waits for its answer.
    static func detachNewThreadAndWait(_ body: @escaping @Sendable () -> Bool) -> @Sendable () -> Bool {
        let result = Mutex<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        return {
            done.wait()
            return result.withLock { $0 }
        }
    }
}
