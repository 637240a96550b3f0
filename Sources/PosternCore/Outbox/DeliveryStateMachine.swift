/// One message's delivery life as a value: events in, actions out, no I/O.
///
/// `queued → claimed(lease) → sent | retrying(at) | dead(reason)`; a retrying message, or a
/// claimed one whose lease ran out, can be claimed again. A message is never delivered at or after
/// its deadline (the earlier of its `giveUpAt` and `createdAt + maximumAge`): an expired sign-in
/// link is not sent late.
public struct DeliveryStateMachine: Sendable, Hashable {
    /// Where the message is.
    public enum State: Sendable, Hashable {
        /// Waiting for its first attempt.
        case queued
        /// Held by `owner` until `until`.
        case claimed(owner: String, until: Int64)
        /// Waiting to be tried again at `at`.
        case retrying(at: Int64)
        /// Done: accepted by the server, or nothing had to be sent.
        case sent
        /// Abandoned.
        case dead(DeadReason)
    }

    /// Why a message was abandoned.
    public enum DeadReason: Sendable, Hashable {
        /// The server refused it for good (5xx).
        case rejected
        /// The recipient is on the suppression list.
        case suppressed
        /// Its deadline passed before it could be delivered.
        case expired
    }

    /// What the worker must do next.
    public enum Action: Sendable, Hashable {
        /// Hand the mail to the transport, then report with ``attempted(_:now:jitter:)``.
        case deliver
        /// Record the message as sent, with this reply; erase the body.
        case markSent(reply: String)
        /// Record the failed attempt and make the message due again at `at`.
        case retry(at: Int64, reply: String)
        /// Record the message as dead with this reply; erase the body; suppress the recipient when
        /// `suppress` is true.
        case markDead(reply: String, suppress: Bool)
        /// Nothing: the event does not apply in this state.
        case none
    }

    /// The recorded states ``claim(owner:now:)`` takes a message from once it is due: its row's
    /// `nextAttemptAt` is at or before now (for `claimed`, that is the lease's end). Stores bind
    /// these into their claim instead of listing states of their own, so a change here reaches
    /// production.
    public static let claimableStates: [OutboxState] = [.queued, .retrying, .claimed]

    /// The current state.
    public private(set) var state: State
    /// Failed attempts so far.
    public private(set) var failedAttempts: Int
    /// The first instant at which the message is no longer delivered.
    public let deadline: Int64
    /// The retry policy.
    public let policy: DeliveryPolicy

    /// A message in `state` after `failedAttempts` failures, abandoned at `deadline`.
    public init(state: State = .queued, failedAttempts: Int = 0, deadline: Int64, policy: DeliveryPolicy = .standard) {
        self.state = state
        self.failedAttempts = failedAttempts
        self.deadline = deadline
        self.policy = policy
    }

    /// The life of a message just claimed from the store (its row says `claimed`).
    public init(claimed message: OutboxMessage, owner: String, policy: DeliveryPolicy = .standard) {
        self.init(
            state: .claimed(owner: owner, until: message.nextAttemptAt), failedAttempts: message.attempts,
            deadline: policy.deadline(createdAt: message.createdAt, giveUpAt: message.giveUpAt), policy: policy)
    }

    /// A worker takes the message at `now`. Returns `.deliver`, or `.markDead` when the deadline has
    /// passed (the message is not sent late).
    public mutating func claim(owner: String, now: Int64) -> Action {
        switch state {
        case .queued:
            break
        case .retrying(let at) where at <= now:
            break
        case .claimed(_, let until) where until <= now:
            break
        case .retrying, .claimed, .sent, .dead:
            return .none
        }
        if now >= deadline { return expire() }
        state = .claimed(owner: owner, until: now + policy.lease)
        return .deliver
    }

    /// The claimed message is checked before it is sent: expired, suppressed, or nothing to send
    /// finish it without sending; otherwise `.deliver`.
    public mutating func prepare(now: Int64, isSuppressed: Bool, hasMail: Bool) -> Action {
        guard case .claimed = state else { return .none }
        if now >= deadline { return expire() }
        if isSuppressed {
            state = .dead(.suppressed)
            return .markDead(reply: "not sent: the recipient is suppressed", suppress: false)
        }
        if !hasMail {
            state = .sent
            return .markSent(reply: "nothing to send")
        }
        return .deliver
    }

    /// The transport reported `outcome` at `now`; `jitter` is a random number in 0..<1, asked for
    /// only for a transient outcome (a random number was a `getrandom` call per sent message).
    /// `retryAfter`: the seconds the server asked to wait (HTTP `Retry-After`); a retry is not due
    /// before then, though never more than the policy's `maximumDelay` away.
    public mutating func attempted(
        _ outcome: DeliveryOutcome, now: Int64, jitter: @autoclosure () -> Double, retryAfter: Int64? = nil) -> Action {
        guard case .claimed = state else { return .none }
        switch outcome {
        case .sent(let reply):
            state = .sent
            return .markSent(reply: reply)
        case .permanent(let reply):
            state = .dead(.rejected)
            return .markDead(reply: reply, suppress: true)
        case .transient(let reply, _):
            failedAttempts += 1
            var at = now + policy.delay(afterFailedAttempts: failedAttempts, jitter: jitter())
            if let retryAfter { at = max(at, now + min(max(retryAfter, 0), policy.maximumDelay)) }
            if at >= deadline {
                state = .dead(.expired)
                return .markDead(reply: "gave up after \(failedAttempts) attempts: \(reply)", suppress: false)
            }
            state = .retrying(at: at)
            return .retry(at: at, reply: reply)
        }
    }

    /// The worker gives the message back without trying it (stopping, or its connection failed):
    /// due again at `at`.
    public mutating func release(at: Int64) -> Action {
        guard case .claimed = state else { return .none }
        state = failedAttempts == 0 ? .queued : .retrying(at: at)
        return .none
    }

    /// The state as a store records it.
    public var recordedState: OutboxState {
        switch state {
        case .queued: .queued
        case .claimed: .claimed
        case .retrying: .retrying
        case .sent: .sent
        case .dead: .dead
        }
    }

    private mutating func expire() -> Action {
        state = .dead(.expired)
        return .markDead(reply: "not sent: its link expired or it was queued too long ago", suppress: false)
    }
}
