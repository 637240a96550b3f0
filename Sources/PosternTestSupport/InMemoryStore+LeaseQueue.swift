import PosternCore

/// A row of an in-memory lease queue (the mail outbox, the webhook deliveries, the SMS outbox): the
/// columns the real stores' shared statements (`SQLStoreTransaction+LeaseQueue`) work on, so their
/// twins here are written once too.
public protocol InMemoryLeaseRow: Sendable {
    var state: OutboxState { get set }
    var attempts: Int { get set }
    var nextAttemptAt: Int64 { get set }
    /// When it was queued: a dead daemon's claims are due again from then.
    var createdAt: Int64 { get }
    var leaseOwner: String? { get set }
    var finishedAt: Int64? { get set }
    var lastReply: String? { get set }
    var purged: Bool { get set }
    /// What a finished row must not keep (mail's body, the SMS's number); nothing by default.
    mutating func eraseOnFinish()
}

extension InMemoryLeaseRow {
    public mutating func eraseOnFinish() {}
}

extension InMemoryStore.QueuedMail: InMemoryLeaseRow {
    public mutating func eraseOnFinish() { mail = nil }
}

extension InMemoryStore.QueuedWebhook: InMemoryLeaseRow {}

extension InMemoryStore.QueuedSMS: InMemoryLeaseRow {
    public mutating func eraseOnFinish() { recipient = nil }
}

extension InMemoryStore.Transaction {
    public func claimDue<Claim>(
        _ queue: LeasedQueue<Claim>, owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]
    ) throws -> [Claim] {
        switch queue.table {
        case .outbox: try queue.claims(.mail(claimDueMail(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        case .smsOutbox: try queue.claims(.sms(claimDueSMS(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        case .webhookDeliveries:
            try queue.claims(.webhooks(claimDueWebhooks(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)))
        }
    }

    public func markSent<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        apply(.finish(id: id, owner: owner, as: .sent, now: now, reply: reply, countAttempt: true), to: queue.table) == 1
    }

    public func markDead<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, now: Int64, reply: String) throws -> Bool {
        apply(.finish(id: id, owner: owner, as: .dead, now: now, reply: reply, countAttempt: false), to: queue.table) == 1
    }

    public func markRetry<Claim>(_ queue: LeasedQueue<Claim>, id: Int64, owner: String, at: Int64, reply: String) throws -> Bool {
        apply(.retry(id: id, owner: owner, at: at, reply: reply), to: queue.table) == 1
    }

    public func purgeFinished<Claim>(_ queue: LeasedQueue<Claim>, before: Int64, limit: Int) throws -> Int {
        apply(.purge(before: before, limit: limit), to: queue.table)
    }

    /// Applies `change` to the rows of `table`; returns how many rows it changed.
    private func apply(_ change: InMemoryLeaseQueue.Change, to table: LeasedQueueTable) -> Int {
        switch table {
        case .outbox: change.apply(to: &state.outbox)
        case .smsOutbox: change.apply(to: &state.sms)
        case .webhookDeliveries: change.apply(to: &state.webhooks)
        }
    }
}

/// The lease queue's operations over one table of rows whose id is their index + 1.
enum InMemoryLeaseQueue {
    /// An outcome or a purge, for any queue's rows.
    enum Change {
        case finish(id: Int64, owner: String, as: OutboxState, now: Int64, reply: String, countAttempt: Bool)
        case retry(id: Int64, owner: String, at: Int64, reply: String)
        case purge(before: Int64, limit: Int)

        /// Applies the change to `rows`; returns how many it changed.
        func apply<Row: InMemoryLeaseRow>(to rows: inout [Row]) -> Int {
            switch self {
            case .finish(let id, let owner, let final, let now, let reply, let countAttempt):
                InMemoryLeaseQueue.finish(&rows, id, owner: owner, as: final, now: now, reply: reply, countAttempt: countAttempt) ? 1 : 0
            case .retry(let id, let owner, let at, let reply): InMemoryLeaseQueue.retry(&rows, id, owner: owner, at: at, reply: reply) ? 1 : 0
            case .purge(let before, let limit): InMemoryLeaseQueue.purge(&rows, before: before, limit: limit)
            }
        }
    }

    /// The index of row `id` while `owner` holds it.
    static func held<Row: InMemoryLeaseRow>(_ rows: [Row], _ id: Int64, by owner: String) -> Int? {
        let index = Int(id) - 1
        guard rows.indices.contains(index), rows[index].state == .claimed, rows[index].leaseOwner == owner else { return nil }
        return index
    }

    /// Claims up to `limit` due rows in a `claimable` state, oldest due first; returns their
    /// indices oldest queued first (as the SQL stores return them).
    static func claim<Row: InMemoryLeaseRow>(
        _ rows: inout [Row], owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]
    ) -> [Int] {
        let due = rows.indices
            .filter { !rows[$0].purged && claimable.contains(rows[$0].state) && rows[$0].nextAttemptAt <= now }
            .sorted { (rows[$0].nextAttemptAt, $0) < (rows[$1].nextAttemptAt, $1) }
            .prefix(max(0, limit))
        for index in due {
            rows[index].state = .claimed
            rows[index].leaseOwner = owner
            rows[index].nextAttemptAt = leaseUntil
        }
        return due.sorted { (rows[$0].createdAt, $0) < (rows[$1].createdAt, $1) }
    }

    /// Finishes row `id` as `final` while `owner` holds it.
    static func finish<Row: InMemoryLeaseRow>(
        _ rows: inout [Row], _ id: Int64, owner: String, as final: OutboxState, now: Int64, reply: String, countAttempt: Bool
    ) -> Bool {
        guard let index = held(rows, id, by: owner) else { return false }
        rows[index].state = final
        rows[index].finishedAt = now
        rows[index].lastReply = reply
        rows[index].attempts += countAttempt ? 1 : 0
        rows[index].leaseOwner = nil
        rows[index].eraseOnFinish()
        return true
    }

    /// Records a failed attempt on row `id` while `owner` holds it: due again at `at`.
    static func retry<Row: InMemoryLeaseRow>(_ rows: inout [Row], _ id: Int64, owner: String, at: Int64, reply: String) -> Bool {
        guard let index = held(rows, id, by: owner) else { return false }
        rows[index].state = .retrying
        rows[index].nextAttemptAt = at
        rows[index].lastReply = reply
        rows[index].attempts += 1
        rows[index].leaseOwner = nil
        return true
    }

    /// Marks at most `limit` rows finished before `before` as purged; returns how many.
    static func purge<Row: InMemoryLeaseRow>(_ rows: inout [Row], before: Int64, limit: Int) -> Int {
        var purged = 0
        for index in rows.indices where purged < limit && !rows[index].purged {
            let row = rows[index]
            guard row.state == .sent || row.state == .dead, let finished = row.finishedAt, finished < before else { continue }
            rows[index].purged = true
            purged += 1
        }
        return purged
    }

    /// Ends, at `now`, the leases of `dead`'s daemon that had not ended yet; returns how many.
    static func reclaim<Row: InMemoryLeaseRow>(_ rows: inout [Row], of dead: DaemonHeartbeat, now: Int64) -> Int {
        var count = 0
        for index in rows.indices {
            let row = rows[index]
            guard row.state == .claimed, row.nextAttemptAt > now, let owner = row.leaseOwner, dead.ownsLease(owner) else { continue }
            // Due again from when it was queued, ahead of what was queued since (as the SQL stores do).
            rows[index].nextAttemptAt = row.createdAt
            count += 1
        }
        return count
    }
}
