import Foundation
import PosternCore

/// One delivery worker: its lease owner name, its transport, its batches: the outbox's lane of the
/// pool's ``DeliveryEngine``, which runs it on a thread of its own.
///
/// It executes what its ``DeliveryBatchMachine`` decides (what to claim, compose, send, record,
/// renew and give back) and adds only the I/O: the store, the content stage, the transport, the
/// clock, and the pipelining of records with sends.
///
/// `@unchecked Sendable`: it is handed to its thread once and used only there; the transport is
/// made on that thread and never leaves it.
final class OutboxWorker: DeliveryLane, @unchecked Sendable {
    private let owner: String
    private let store: any Store
    private let makeTransport: MailTransportFactory
    private let compose: OutboxWorkerPool.Compose
    private let clock: any WallClock
    private let random: @Sendable () -> Double
    private let configuration: OutboxWorkerPool.Configuration
    private let logger: Logger?
    private var transport: (any MailTransport)?
    /// The batch decisions.
    private var machine: DeliveryBatchMachine
    /// Where outcome records are committed, so the next send can start meanwhile.
    private let recorder: OutcomeRecorder
    /// The last records of the batch before, not waited for yet: queued before the next claim,
    /// they commit with it (a write that ends their gathering wait) or earlier, so the worker
    /// does not sit out that wait between batches.
    private var carried: [PendingRecord] = []

    init(
        owner: String, store: any Store, makeTransport: @escaping MailTransportFactory, compose: @escaping OutboxWorkerPool.Compose,
        clock: any WallClock, random: @escaping @Sendable () -> Double, configuration: OutboxWorkerPool.Configuration,
        logger: Logger?, recorder: OutcomeRecorder
    ) {
        self.owner = owner
        self.store = store
        self.makeTransport = makeTransport
        self.compose = compose
        self.clock = clock
        self.random = random
        self.configuration = configuration
        self.logger = logger
        self.recorder = recorder
        self.machine = DeliveryBatchMachine(owner: owner, policy: configuration.policy, maximumClaim: configuration.batchSize)
    }

    /// Claims a batch and works through it (a store failure is logged); true when anything was due.
    func deliverBatch(stopping: () -> Bool) -> Bool {
        do {
            return try deliverOneBatch(stopping: stopping)
        } catch {
            logger?.error("outbox: the store failed", ["owner": owner, "error": "\(error)"])
            return false
        }
    }

    /// Nothing was due: the records carried over are waited for before the worker waits.
    func idle() { settleCarried() }

    /// Stopped: records what is in flight, gives back unstarted claims, closes the connection.
    func finish() {
        settleCarried()
        let owner = self.owner
        let releases = machine.stopped(now: clock.unixSeconds())
        if !releases.isEmpty { _ = try? store.write { try $0.releaseLeases(owner: owner, releases) } }
        transport?.close()
        transport = nil
    }

    /// Claims a batch and works through it; false when nothing was due.
    private func deliverOneBatch(stopping: () -> Bool) throws -> Bool {
        let owner = self.owner
        let request = machine.claimRequest(now: clock.unixSeconds())
        // A claim needs no fsync of its own: lost with a crash of the machine, its messages are
        // queued again and sent once more, as a lost outcome is. Synced, it was one fsync per
        // batch on the one writer every worker's records wait for.
        let claims = try store.writeSyncingLater {
            try $0.claimDue(
                .mail, owner: owner, now: request.now, leaseUntil: request.leaseUntil, limit: request.limit, claimable: request.claimable)
        }
        settleCarried()
        let unwritten = machine.claimed(claims)
        guard !claims.isEmpty else { return false }

        // Compose what has no body yet; the machine settles what must not be sent, recorded in one
        // transaction. A new body is stored only with a transient failure, so that a retry sends
        // the same bytes (the same Message-ID): most mail is sent on its first try, and a 4 KB body
        // written and erased again per message was most of what the writer wrote. After a crash
        // between the send and its record (at most ``recordsInFlight`` messages per worker) the
        // message is composed anew.
        var content: [Int64: DeliveryBatchMachine.Content] = [:]
        for (message, result) in zip(unwritten, unwritten.isEmpty ? [] : compose(unwritten)) {
            switch result {
            case .success(let mail):
                content[message.id] = mail.map { .mail($0) } ?? .nothing
            case .failure:
                content[message.id] = .failed
                logger?.warning("outbox: the content stage failed", ["id": "\(message.id)", "intent": message.intent.name])
            }
        }
        let settled = machine.composed(content, jitter: random)

        // Each outcome is recorded while the next messages are already on their way, but none is
        // completed (SMTP's final ".") while more than ``recordsInFlight`` - 1 records before it
        // are uncommitted: a crash of the process leaves at most ``recordsInFlight``
        // sent-but-unrecorded messages per worker (those and its own), and each commit overlaps
        // the SMTP round trips of the messages after it.
        // The records are gathering writes: the workers' share commits. Outcomes are committed
        // without waiting for the disk (`writeSyncingLater`: fsynced within 0.2 s): a crash of the
        // machine may also lose the outcomes of its last 0.2 s, and those messages are sent once
        // more; none is lost. What was settled unsent is the first such record of the batch.
        var pending: [PendingRecord] = []
        defer { for record in pending { _ = record.wait() } }
        let events = configuration.events
        if !settled.isEmpty {
            let prepared = try settled.map { (record: $0, event: try Self.event(of: $0, events: events)) }
            pending.append(recorder.submit { writer in
                for (record, event) in prepared { try Self.write(record, event: event, owner: owner, events: events, in: writer) }
            })
            for record in settled { log(record.action, id: record.id) }
        }

        steps: while true {
            switch machine.next(now: clock.unixSeconds(), stopping: stopping()) {
            case .deliver(let id, let mail):
                let older = pending.dropLast(Self.recordsInFlight - 1)
                let startedAt = clock.unixSeconds()
                let started = ContinuousClock.now
                let outcome = deliver(mail) { older.allSatisfy { $0.wait() } }
                let took = ContinuousClock.now - started
                try settle(&pending, keeping: Self.recordsInFlight - 1)
                guard let record = machine.delivered(outcome, now: clock.unixSeconds(), jitter: random()) else { continue }
                let attempt = configuration.deliveryLog?.attempt(
                    id: id, recipient: record.recipient, startedAt: startedAt,
                    milliseconds: took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000,
                    outcome: outcome, action: record.action)
                let event = try Self.event(of: record, events: events)
                pending.append(recorder.submit { writer in
                    if let attempt { try writer.recordOutboxAttempt(attempt) }
                    try Self.write(record, event: event, owner: owner, events: events, in: writer)
                })
                log(record.action, id: id)
            case .release(let releases):
                try settle(&pending)
                _ = try store.writeSyncingLater { try $0.releaseLeases(owner: owner, releases) }
            case .finished:
                break steps
            }
        }
        // Waiting here for the last records sat out the writer's gathering wait (up to
        // `GroupCommitWriter.gatheringWait`) once a batch; the next claim commits them.
        carried = pending
        pending = []
        return true
    }

    /// Waits for the records carried over from the batch before (committed by now when a claim
    /// followed them). One that failed is logged: its message stays claimed until its lease ends
    /// and is then sent again, as when a record fails within a batch.
    private func settleCarried() {
        var records = carried
        carried = []
        do {
            try settle(&records)
        } catch {
            logger?.error("outbox: the store failed", ["owner": owner, "error": "\(error)"])
        }
    }

    /// How many of a worker's messages may be sent with their outcome records uncommitted (the
    /// `recordsInFlight - 1` before a message's final "." and its own): so many messages a crash
    /// of the process may send twice, per worker. With one, a
    /// message's final "." waited for the record of the message just before it, so every record
    /// was a commit of its own (the writer took it at once): 24 KB of WAL and 115-130 µs of the
    /// writer's time per message in a drain. With two, a record has a whole message's time to
    /// be committed, long enough to gather with the other workers' (``QueuedWriteStore``):
    /// 16 KB and 75-87 µs, and the drain 11 % faster (3,460-3,700 against 2,800-3,330 a second,
    /// three alternating runs each). With three, two messages' time: once a worker sent a message
    /// in 0.6 ms, the writer's gathering wait and commit often outlasted one, and the cores sat
    /// idle while every worker waited at its final "." (17 % of the time in a drain behind
    /// send-link load, against 11-12 % with three; the drain 7,224-7,309 a second against
    /// 6,394-6,816, alternating runs). Four bought little more (7,294-7,725).
    static let recordsInFlight = 3

    /// Waits for the records in flight but the last `keeping`; throws the first error among them.
    private func settle(_ pending: inout [PendingRecord], keeping: Int = 0) throws {
        let count = max(0, pending.count - keeping)
        let waited = pending.prefix(count)
        pending.removeFirst(count)
        if let error = waited.compactMap({ $0.failure() }).first { throw error }
    }

    private func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        if transport == nil {
            do {
                transport = try makeTransport()
            } catch {
                return .transient(reply: "the transport cannot be set up: \(error)", connectionFailed: true)
            }
        }
        guard let transport else { return .transient(reply: "no transport", connectionFailed: true) }
        return transport.deliver(mail, completingAfter: gate)
    }

    /// The `mail.*` webhook event of an outcome, prepared here on the worker's thread: the one
    /// thread that commits every worker's records then only inserts it.
    private static func event(of record: DeliveryBatchMachine.Record, events: EventLedger?) throws -> EventLedger.Prepared? {
        guard let events else { return nil }
        let event: WebhookEvent
        switch record.action {
        case .markSent: event = .mailSent(messageID: record.id, kind: record.kind, attempts: record.attempts)
        case .retry(let at, _): event = .mailDeferred(messageID: record.id, kind: record.kind, attempts: record.attempts, retryAt: at)
        case .markDead: event = .mailFailed(messageID: record.id, kind: record.kind, attempts: record.attempts, email: record.recipient)
        case .deliver, .none: return nil
        }
        return try events.prepare(event, now: record.at)
    }

    /// Writes one outcome and, when it changed the message (the lease was still held), its
    /// `mail.*` webhook event in the same transaction.
    private static func write(
        _ record: DeliveryBatchMachine.Record, event: EventLedger.Prepared?, owner: String, events: EventLedger?, in writer: any StoreWriter
    ) throws {
        if let keep = record.keep { _ = try writer.storeMail(id: record.id, owner: owner, mail: keep) }
        let changed: Bool
        switch record.action {
        case .markSent(let reply):
            changed = try writer.markSent(.mail, id: record.id, owner: owner, now: record.at, reply: reply)
        case .retry(let at, let reply):
            changed = try writer.markRetry(.mail, id: record.id, owner: owner, at: at, reply: reply)
        case .markDead(let reply, let suppress):
            // A message whose lease was lost (another worker has it) changes nothing, suppression included.
            changed = try writer.markDead(.mail, id: record.id, owner: owner, now: record.at, reply: reply)
            if changed && suppress { try writer.suppress(record.recipient, reason: SuppressionReason.rejected.stored(reply), now: record.at) }
        case .deliver, .none:
            changed = false
        }
        if changed, let events, let event { try events.record(event, tx: writer) }
        if let renewal = record.renewLeases { try writer.extendLeases(owner: owner, leaseUntil: renewal) }
    }

    private func log(_ action: DeliveryStateMachine.Action, id: Int64) {
        guard let logger else { return }
        switch action {
        case .markSent: logger.log(.debug, "outbox: sent", ["id": "\(id)"])
        case .retry(let at, let reply): logger.info("outbox: will retry", ["id": "\(id)", "at": "\(at)", "reply": reply])
        case .markDead(let reply, let suppress):
            logger.warning("outbox: dead", ["id": "\(id)", "reply": reply, "suppressed": suppress ? "true" : "false"])
        case .deliver, .none: break
        }
    }
}

/// One outcome record, committed by the pool's ``OutcomeRecorder``.
///
/// `@unchecked Sendable`: `error` is written once by the recorder thread before `done` is
/// signalled, and read only by the worker after waiting for `done`.
final class PendingRecord: @unchecked Sendable {
    let change: @Sendable (any StoreWriter) throws -> Void
    private let done = DispatchSemaphore(value: 0)
    private var error: (any Error)?
    private var finished = false

    init(_ change: @escaping @Sendable (any StoreWriter) throws -> Void) { self.change = change }

    /// Recorder thread: the record is committed (`error` nil) or failed.
    func complete(_ error: (any Error)?) {
        self.error = error
        done.signal()
    }

    /// Waits until the record is committed (or failed): true when it is. Worker thread only.
    func wait() -> Bool { failure() == nil }

    /// Waits, then the error, if the record failed. Worker thread only.
    func failure() -> (any Error)? {
        if !finished {
            done.wait()
            finished = true
        }
        return error
    }
}

/// Commits the workers' outcome records without making them wait. A store with a writer of its own
/// (``QueuedWriteStore``: SQLite's writer, PostgreSQL's batch writer) is handed each record
/// directly, to join the writer's next batch, in a savepoint of its own; for any other store (the
/// in-memory one) one recorder thread commits all that are waiting in one store write:
/// fewer threads woken per commit than one writer per worker, which counts on a busy machine.
/// (On SQLite the recorder was a second hand-off before the writer's, one more thread woken per
/// commit; the commit a worker's next final "." waits for still took 0.4 ms of its 1.4 ms per
/// message under a backlog, mostly the writer's own work and its wake-ups.)
final class OutcomeRecorder: Sendable {
    private let store: any Store
    private let queued: (any QueuedWriteStore)?
    /// The records waiting; the recorder thread is the one consumer and takes them all at once.
    private let queue = BatchQueue<PendingRecord>(consumers: 1)

    init(store: any Store) {
        self.store = store
        queued = store as? any QueuedWriteStore
        guard queued == nil else { return }
        Thread.start(named: "outbox-record") { [self] in run() }
    }

    /// Queues `change` for the next commit. After ``stop()`` the record fails at once.
    func submit(_ change: @escaping @Sendable (any StoreWriter) throws -> Void) -> PendingRecord {
        let record = PendingRecord(change)
        if let queued {
            guard !queue.isClosed else {
                record.complete(StoreError.unavailable("the outcome recorder has stopped"))
                return record
            }
            queued.queueWrite(syncingLater: true, gathering: true, change) { result in
                if case .failure(let error) = result { record.complete(error) } else { record.complete(nil) }
            }
        } else if !queue.append(record) {
            record.complete(StoreError.unavailable("the outcome recorder has stopped"))
        }
        return record
    }

    /// Ends the thread once the queue is empty (refuses records from then on).
    func stop() {
        queue.close()
    }

    private func run() {
        while case .items(let batch) = queue.take(upTo: .max) {
            let changes = batch.map(\.change)
            do {
                try store.writeSyncingLater { writer in
                    for change in changes { try change(writer) }
                }
                for record in batch { record.complete(nil) }
            } catch {
                for record in batch { record.complete(error) }
            }
        }
        queue.consumerEnded()
    }
}
