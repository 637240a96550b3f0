/// One delivery worker's batches as a value: events in, actions out, no I/O.
///
/// It owns the ``DeliveryStateMachine`` of every message in the batch it holds and makes the
/// batch's decisions, so the worker only executes them and they are tested without a store, a
/// transport or a clock:
/// - how many to claim: 4 at first, doubling up to `maximumClaim` while claims come back full (a
///   backlog means fewer claim commits per message), back to 4 after a short one (a burst is
///   shared among the workers);
/// - what the claim binds: the lease's end and the claimable states;
/// - which messages need composing, and what becomes of those settled before any send;
/// - the order of sends, and each outcome's record: a retry keeps a body composed this time (the
///   retry sends the same bytes), the rest of the batch's leases are renewed once half of the
///   lease is used up;
/// - giving back what was not started: on stop, due at once; after the connection was lost, due
///   when a first retry would be.
///
/// Life of a batch: ``claimRequest(now:)`` → the store claims → ``claimed(_:)`` → the worker
/// composes what it names → ``composed(_:jitter:)`` → ``next(now:stopping:)`` until `.finished`,
/// reporting each send with ``delivered(_:now:jitter:)``. ``stopped(now:)`` gives back whatever a
/// batch cut short by a store failure still holds.
public struct DeliveryBatchMachine: Sendable {
    /// The size of a first claim, and of the claim after a short one.
    public static let firstClaim = 4

    /// A claim for the store to make: up to `limit` messages in one of `claimable` states due at
    /// `now`, leased until `leaseUntil`.
    public struct ClaimRequest: Sendable, Hashable {
        /// The claim's instant, in Unix seconds.
        public let now: Int64
        /// The lease's end.
        public let leaseUntil: Int64
        /// The most messages to claim.
        public let limit: Int
        /// The recorded states a due message may be claimed from.
        public let claimable: [OutboxState]

        /// Creates a request.
        public init(now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) {
            self.now = now
            self.leaseUntil = leaseUntil
            self.limit = limit
            self.claimable = claimable
        }
    }

    /// What the content stage made of a message it was asked to compose.
    public enum Content: Sendable, Hashable {
        /// The mail to send.
        case mail(OutgoingMail)
        /// Nothing is to be sent (the message is finished unsent).
        case nothing
        /// The stage failed: a transient failure, retried with backoff.
        case failed
    }

    /// One change for the store to record, in the order given.
    public struct Record: Sendable, Hashable {
        /// The message.
        public let id: Int64
        /// Its recipient (suppressed when the action says so).
        public let recipient: EmailAddress
        /// `markSent`, `retry` or `markDead`.
        public let action: DeliveryStateMachine.Action
        /// When it happened, in Unix seconds.
        public let at: Int64
        /// Store this mail on the message first: a retry of mail composed on this claim.
        public let keep: OutgoingMail?
        /// Move the leases of the worker's other claimed messages to this instant.
        public let renewLeases: Int64?
        /// The mail's kind (its intent's name), for the `mail.*` webhook events.
        public let kind: String
        /// Delivery attempts made, this one included when it was one.
        public let attempts: Int

        /// Creates a record.
        public init(
            id: Int64, recipient: EmailAddress, action: DeliveryStateMachine.Action, at: Int64, keep: OutgoingMail?, renewLeases: Int64?,
            kind: String = "", attempts: Int = 0
        ) {
            self.kind = kind
            self.attempts = attempts
            self.id = id
            self.recipient = recipient
            self.action = action
            self.at = at
            self.keep = keep
            self.renewLeases = renewLeases
        }
    }

    /// What the worker does next within the batch.
    public enum Step: Sendable, Hashable {
        /// Send `mail`, then report with ``delivered(_:now:jitter:)``.
        case deliver(id: Int64, mail: OutgoingMail)
        /// Give these messages back (after the records in flight are committed).
        case release([OutboxRelease])
        /// The batch is done.
        case finished
    }

    private struct Entry: Sendable {
        let claim: OutboxClaim
        var life: DeliveryStateMachine
        /// The mail to send: stored by an earlier attempt, or composed on this claim.
        var mail: OutgoingMail?
    }

    /// The lease owner the worker claims as.
    public let owner: String
    /// Backoff, deadline and lease.
    public let policy: DeliveryPolicy
    /// The largest claim.
    public let maximumClaim: Int
    /// How many messages the next claim asks for.
    public private(set) var claimSize: Int

    private var request: ClaimRequest?
    private var batch: [Entry] = []
    /// Positions in `batch` of the messages to send, in order; `next` is the first not handed out.
    private var ready: [Int] = []
    private var nextReady = 0
    /// The position in `batch` of the message handed out and not yet reported.
    private var sending: Int?
    private var leaseUntil: Int64 = 0
    /// Set when the connection failed with messages left: they are given back due at this instant.
    private var giveBackAt: Int64?
    /// Messages of batches cut short (a store failure), as claimed: any of them may still be
    /// claimed in the store (a failed record was rolled back); the store's lease check skips
    /// those that are not.
    private var carried: [Int64: OutboxClaim] = [:]

    /// The machine of a worker claiming as `owner`, at most `maximumClaim` at a time.
    public init(owner: String, policy: DeliveryPolicy, maximumClaim: Int) {
        self.owner = owner
        self.policy = policy
        self.maximumClaim = max(1, maximumClaim)
        claimSize = min(Self.firstClaim, self.maximumClaim)
    }

    /// The claim to make at `now`. A batch still open (its worker gave up on it after a store
    /// failure) is set aside for ``stopped(now:)``.
    public mutating func claimRequest(now: Int64) -> ClaimRequest {
        closeBatch(cutShort: true)
        // A lease that has ended is no longer this worker's to give back.
        carried = carried.filter { $0.value.message.nextAttemptAt > now }
        let request = ClaimRequest(
            now: now, leaseUntil: now + policy.lease, limit: claimSize, claimable: DeliveryStateMachine.claimableStates)
        self.request = request
        leaseUntil = request.leaseUntil
        return request
    }

    /// The store claimed `claims` (oldest first) for the last request. Returns the messages to
    /// compose: first claims with no stored mail that are neither suppressed nor past their deadline.
    public mutating func claimed(_ claims: [OutboxClaim]) -> [OutboxMessage] {
        guard let request else { return [] }
        claimSize = claims.count == request.limit ? min(request.limit * 2, maximumClaim) : min(Self.firstClaim, maximumClaim)
        batch = claims.map { Entry(claim: $0, life: DeliveryStateMachine(claimed: $0.message, owner: owner, policy: policy), mail: $0.mail) }
        return batch.filter { $0.mail == nil && !$0.claim.isSuppressed && request.now < $0.life.deadline }.map(\.claim.message)
    }

    /// The content stage's results for the messages ``claimed(_:)`` named (one missing counts as
    /// failed: never "nothing to send" by mistake). Returns the records of messages settled
    /// without a send — expired, suppressed, nothing to send, or composing failed — to commit
    /// before the first send completes. `jitter` gives a number in 0..<1 per retry.
    public mutating func composed(_ content: [Int64: Content], jitter: () -> Double) -> [Record] {
        guard let request else { return [] }
        let now = request.now
        var records: [Record] = []
        ready = []
        nextReady = 0
        for position in batch.indices {
            let claim = batch[position].claim
            let needed = batch[position].mail == nil && !claim.isSuppressed && now < batch[position].life.deadline
            if needed {
                switch content[claim.message.id] ?? .failed {
                case .mail(let mail):
                    batch[position].mail = mail
                case .nothing:
                    break
                case .failed:
                    let action = batch[position].life.attempted(
                        .transient(reply: "the content stage failed", connectionFailed: false), now: now, jitter: jitter())
                    records.append(record(position, action, at: now))
                    continue
                }
            }
            let action = batch[position].life.prepare(now: now, isSuppressed: claim.isSuppressed, hasMail: batch[position].mail != nil)
            if action == .deliver {
                ready.append(position)
            } else {
                records.append(record(position, action, at: now))
            }
        }
        return records
    }

    /// What to do next at `now`; `stopping` gives back every message not yet handed out.
    public mutating func next(now: Int64, stopping: Bool) -> Step {
        guard sending == nil else { return .finished }
        if nextReady < ready.count, let at = stopping ? now : giveBackAt {
            let rest = ready[nextReady...]
            nextReady = ready.count
            return .release(rest.compactMap { release(position: $0, at: at) })
        }
        guard nextReady < ready.count else {
            closeBatch(cutShort: false)
            return .finished
        }
        let position = ready[nextReady]
        nextReady += 1
        guard let mail = batch[position].mail else { return next(now: now, stopping: stopping) }
        sending = position
        return .deliver(id: batch[position].claim.message.id, mail: mail)
    }

    /// The message handed out by ``next(now:stopping:)`` came to `outcome` at `now`. Returns its
    /// record (nil when nothing was handed out).
    public mutating func delivered(_ outcome: DeliveryOutcome, now: Int64, jitter: @autoclosure () -> Double) -> Record? {
        guard let position = sending else { return nil }
        sending = nil
        let action = batch[position].life.attempted(outcome, now: now, jitter: jitter())
        let more = nextReady < ready.count
        // The rest keeps its lease: renewed with this record once half of it is used up (a slow
        // server), not on every message.
        var renewal: Int64?
        if more && now + policy.lease / 2 >= leaseUntil {
            renewal = now + policy.lease
            leaseUntil = now + policy.lease
        }
        // A retry sends what was composed now: kept before the lease is given up.
        let keep: OutgoingMail? = if case .retry = action, batch[position].claim.mail == nil { batch[position].mail } else { nil }
        if case .transient(_, connectionFailed: true) = outcome, more {
            // The connection is down: the rest of the batch waits as long as a first retry would.
            giveBackAt = now + policy.baseDelay
        }
        let message = batch[position].claim.message
        return Record(
            id: message.id, recipient: message.recipient, action: action, at: now, keep: keep, renewLeases: renewal,
            kind: message.intent.name, attempts: message.attempts + 1)
    }

    /// The worker stops: gives back, due at `now`, what batches cut short may still hold, and
    /// what the open batch has not handed out. Each goes back as it was claimed (queued when never
    /// tried, retrying otherwise): a record that failed left the row as claimed.
    public mutating func stopped(now: Int64) -> [OutboxRelease] {
        closeBatch(cutShort: true)
        defer { carried = [:] }
        return carried.values.sorted { $0.message.id < $1.message.id }.map { claim in
            var life = DeliveryStateMachine(claimed: claim.message, owner: owner, policy: policy)
            _ = life.release(at: now)
            return OutboxRelease(id: claim.message.id, state: life.recordedState, at: now)
        }
    }

    private mutating func release(position: Int, at: Int64) -> OutboxRelease? {
        guard case .claimed = batch[position].life.state else { return nil }
        _ = batch[position].life.release(at: at)
        return OutboxRelease(id: batch[position].claim.message.id, state: batch[position].life.recordedState, at: at)
    }

    private func record(_ position: Int, _ action: DeliveryStateMachine.Action, at: Int64) -> Record {
        let message = batch[position].claim.message
        return Record(
            id: message.id, recipient: message.recipient, action: action, at: at, keep: nil, renewLeases: nil,
            kind: message.intent.name, attempts: message.attempts)
    }

    private mutating func closeBatch(cutShort: Bool) {
        if cutShort {
            for entry in batch { carried[entry.claim.message.id] = entry.claim }
        }
        batch = []
        ready = []
        nextReady = 0
        sending = nil
        giveBackAt = nil
    }
}
