import PosternCore
import Testing

@Suite("Delivery batch machine")
struct DeliveryBatchMachineTests {
    let policy = DeliveryPolicy(baseDelay: 30, lease: 150)
    let alice = EmailAddress.restored(localPart: "alice", domain: "example.com")

    func mail(_ id: Int64) -> OutgoingMail {
        OutgoingMail(
            storedMessageID: "<m\(id)@example.com>", envelope: MailEnvelope(sender: "no-reply@example.com", recipients: ["alice@example.com"]),
            bytes: Array("body \(id)\r\n".utf8))
    }

    /// Claims as the store returns them for `request`: ids from `first`, leased until the request's end.
    func claims(
        _ count: Int, from first: Int64 = 1, for request: DeliveryBatchMachine.ClaimRequest, attempts: Int = 0, stored: Bool = false,
        suppressed: Bool = false, giveUpAt: Int64 = 100_000
    ) -> [OutboxClaim] {
        (0..<Int64(count)).map { offset in
            let id = first + offset
            return OutboxClaim(
                message: OutboxMessage(
                    id: id, intent: .signIn(requestID: "r\(id)"), recipient: alice, state: .claimed, attempts: attempts,
                    nextAttemptAt: request.leaseUntil, createdAt: 900, giveUpAt: giveUpAt, finishedAt: nil, lastReply: nil,
                    messageID: stored ? "<m\(id)@example.com>" : nil),
                mail: stored ? mail(id) : nil, isSuppressed: suppressed)
        }
    }

    /// Claims `count` stored messages and composes nothing: a batch ready to send.
    func readyBatch(_ machine: inout DeliveryBatchMachine, count: Int, now: Int64 = 1_000, attempts: Int = 0) -> [OutboxClaim] {
        let request = machine.claimRequest(now: now)
        let batch = claims(count, for: request, attempts: attempts, stored: true)
        #expect(machine.claimed(batch).isEmpty)
        #expect(machine.composed([:], jitter: { 0 }).isEmpty)
        return batch
    }

    @Test("a claim binds the lease's end and the claimable states of the message machine")
    func claimRequest() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        let request = machine.claimRequest(now: 1_000)
        #expect(request == .init(now: 1_000, leaseUntil: 1_150, limit: 4, claimable: [.queued, .retrying, .claimed]))
        #expect(request.claimable == DeliveryStateMachine.claimableStates)
    }

    @Test("the claim size doubles 4 → 64 while claims come back full, and falls back to 4 after a short one")
    func claimSizing() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        var sizes: [Int] = []
        var next: Int64 = 1
        for _ in 0..<6 {
            let request = machine.claimRequest(now: 1_000)
            sizes.append(request.limit)
            _ = machine.claimed(claims(request.limit, from: next, for: request, stored: true))
            next += Int64(request.limit)
            _ = machine.composed([:], jitter: { 0 })
            while case .deliver = machine.next(now: 1_000, stopping: false) { _ = machine.delivered(.sent(reply: "250"), now: 1_000, jitter: 0) }
        }
        #expect(sizes == [4, 8, 16, 32, 64, 64])
        let short = machine.claimRequest(now: 1_000)
        _ = machine.claimed(claims(3, from: next, for: short, stored: true))
        #expect(machine.claimRequest(now: 1_000).limit == 4)
        _ = machine.claimed([])
        #expect(machine.claimRequest(now: 1_000).limit == 4)
        var small = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 2)
        #expect(small.claimRequest(now: 1_000).limit == 2)
    }

    @Test("sends go out in claim order, each with its record; the batch then finishes")
    func sendsInOrder() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 3)
        var sent: [Int64] = []
        while case .deliver(let id, let mail) = machine.next(now: 1_001, stopping: false) {
            #expect(mail == self.mail(id))
            sent.append(id)
            let record = machine.delivered(.sent(reply: "250 ok"), now: 1_001, jitter: 0)
            #expect(record == .init(
                id: id, recipient: alice, action: .markSent(reply: "250 ok"), at: 1_001, keep: nil, renewLeases: nil, kind: "sign-in",
                attempts: 1))
        }
        #expect(sent == [1, 2, 3])
        #expect(machine.next(now: 1_002, stopping: false) == .finished)
        #expect(machine.delivered(.sent(reply: "250"), now: 1_002, jitter: 0) == nil, "nothing was handed out")
    }

    @Test("the rest of the batch's leases are renewed once half of the lease is used, not before, and not after the last")
    func renewalAtHalfTheLease() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 3, now: 1_000)  // leased until 1_150
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        #expect(machine.delivered(.sent(reply: "250"), now: 1_074, jitter: 0)?.renewLeases == nil, "less than half used")
        guard case .deliver = machine.next(now: 1_074, stopping: false) else { Issue.record("no send"); return }
        #expect(machine.delivered(.sent(reply: "250"), now: 1_075, jitter: 0)?.renewLeases == 1_225, "half used: renewed")
        guard case .deliver = machine.next(now: 1_075, stopping: false) else { Issue.record("no send"); return }
        #expect(machine.delivered(.sent(reply: "250"), now: 1_200, jitter: 0)?.renewLeases == nil, "nothing left to hold")
    }

    @Test("on stop, the messages not yet handed out go back due at once: queued when untried, retrying otherwise")
    func stopGivesBackUnstarted() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        let request = machine.claimRequest(now: 1_000)
        let fresh = claims(2, from: 1, for: request, stored: true)
        let tried = claims(1, from: 3, for: request, attempts: 2, stored: true)
        _ = machine.claimed(fresh + tried)
        _ = machine.composed([:], jitter: { 0 })
        guard case .deliver(let first, _) = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        #expect(first == 1)
        _ = machine.delivered(.sent(reply: "250"), now: 1_001, jitter: 0)
        #expect(
            machine.next(now: 1_002, stopping: true)
                == .release([.init(id: 2, state: .queued, at: 1_002), .init(id: 3, state: .retrying, at: 1_002)]))
        #expect(machine.next(now: 1_002, stopping: true) == .finished)
        #expect(machine.stopped(now: 1_003).isEmpty, "nothing is held after a batch that finished")
    }

    @Test("a lost connection gives the rest back due when a first retry would be")
    func connectionLost() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 3, now: 1_000)
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        let record = machine.delivered(.transient(reply: "connection refused", connectionFailed: true), now: 1_010, jitter: 0)
        #expect(record?.action == .retry(at: 1_040, reply: "connection refused"))
        #expect(
            machine.next(now: 1_011, stopping: false)
                == .release([.init(id: 2, state: .queued, at: 1_040), .init(id: 3, state: .queued, at: 1_040)]))
        #expect(machine.next(now: 1_011, stopping: false) == .finished)
    }

    @Test("a random jitter is asked for only for a transient outcome, not for a sent or refused message")
    func jitterOnlyForRetries() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 3)
        var asked = 0
        func jitter() -> Double {
            asked += 1
            return 0.5
        }
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        #expect(machine.delivered(.sent(reply: "250"), now: 1_000, jitter: jitter())?.action == .markSent(reply: "250"))
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        _ = machine.delivered(.permanent(reply: "550 no such user"), now: 1_000, jitter: jitter())
        #expect(asked == 0)
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        guard case .retry = machine.delivered(.transient(reply: "451 later", connectionFailed: false), now: 1_000, jitter: jitter())?.action
        else { Issue.record("not retried"); return }
        #expect(asked == 1)
    }

    @Test("a transient reply that is not the connection's keeps the batch going")
    func transientKeepsGoing() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 2)
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        _ = machine.delivered(.transient(reply: "451 later", connectionFailed: false), now: 1_000, jitter: 0)
        guard case .deliver(let id, _) = machine.next(now: 1_000, stopping: false) else { Issue.record("the batch stopped"); return }
        #expect(id == 2)
        // A lost connection on the last message leaves nothing to give back.
        _ = machine.delivered(.transient(reply: "refused", connectionFailed: true), now: 1_000, jitter: 0)
        #expect(machine.next(now: 1_000, stopping: false) == .finished)
    }

    @Test("what has no body is composed; a retry keeps a body composed on this claim, not one stored before")
    func composeAndKeep() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        let request = machine.claimRequest(now: 1_000)
        let new = claims(1, from: 1, for: request)
        let stored = claims(1, from: 2, for: request, attempts: 1, stored: true)
        #expect(machine.claimed(new + stored).map(\.id) == [1])
        #expect(machine.composed([1: .mail(mail(1))], jitter: { 0 }).isEmpty)
        guard case .deliver(let first, _) = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        #expect(first == 1)
        #expect(machine.delivered(.transient(reply: "451", connectionFailed: false), now: 1_000, jitter: 0)?.keep == mail(1))
        guard case .deliver(let second, _) = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        #expect(second == 2)
        #expect(machine.delivered(.transient(reply: "451", connectionFailed: false), now: 1_000, jitter: 0)?.keep == nil)
    }

    @Test("settled before any send: compose failed (retry), nothing to send (sent), suppressed and expired (dead)")
    func settledUnsent() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        let request = machine.claimRequest(now: 1_000)
        let batch = claims(2, from: 1, for: request) + claims(1, from: 3, for: request, suppressed: true)
            + claims(1, from: 4, for: request, giveUpAt: 1_000) + claims(1, from: 5, for: request)
        #expect(machine.claimed(batch).map(\.id) == [1, 2, 5], "neither the suppressed nor the expired one is composed")
        let records = machine.composed([1: .failed, 2: .nothing], jitter: { 0 })
        #expect(records.map(\.id) == [1, 2, 3, 4, 5])
        #expect(records[0].action == .retry(at: 1_030, reply: "the content stage failed"))
        #expect(records[1].action == .markSent(reply: "nothing to send"))
        #expect(records[2].action == .markDead(reply: "not sent: the recipient is suppressed", suppress: false))
        #expect(records[3].action == .markDead(reply: "not sent: its link expired or it was queued too long ago", suppress: false))
        #expect(records[4].action == .retry(at: 1_030, reply: "the content stage failed"), "missing content is a failure, never nothing to send")
        #expect(records.allSatisfy { $0.at == 1_000 && $0.keep == nil && $0.renewLeases == nil })
        #expect(machine.next(now: 1_000, stopping: false) == .finished)
    }

    @Test("a batch cut short by a store failure is given back on stop as it was claimed, until its lease ends")
    func cutShortBatch() {
        var machine = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&machine, count: 2, now: 1_000, attempts: 1)
        guard case .deliver = machine.next(now: 1_000, stopping: false) else { Issue.record("no send"); return }
        _ = machine.delivered(.sent(reply: "250"), now: 1_000, jitter: 0)
        // The record failed; the worker gave up on the batch and claims again.
        _ = machine.claimRequest(now: 1_001)
        _ = machine.claimed([])
        #expect(machine.stopped(now: 1_002) == [.init(id: 1, state: .retrying, at: 1_002), .init(id: 2, state: .retrying, at: 1_002)])
        #expect(machine.stopped(now: 1_003).isEmpty)

        var later = DeliveryBatchMachine(owner: "w", policy: policy, maximumClaim: 64)
        _ = readyBatch(&later, count: 1, now: 1_000)
        _ = later.claimRequest(now: 1_150)
        #expect(later.stopped(now: 1_151).isEmpty, "the lease ended: no longer this worker's")
    }
}
