import PosternCore
import Testing

@Suite("Delivery state machine")
struct DeliveryStateMachineTests {
    let policy = DeliveryPolicy()

    func claimed(createdAt: Int64 = 1_000, giveUpAt: Int64 = 1_000 + 600, failed: Int = 0) -> DeliveryStateMachine {
        var life = DeliveryStateMachine(
            failedAttempts: failed, deadline: policy.deadline(createdAt: createdAt, giveUpAt: giveUpAt), policy: policy)
        #expect(life.claim(owner: "w1", now: createdAt) == .deliver)
        return life
    }

    @Test("a claimed message is delivered and a 2xx marks it sent")
    func sentOnSuccess() {
        var life = claimed()
        #expect(life.state == .claimed(owner: "w1", until: 1_000 + policy.lease))
        #expect(life.attempted(.sent(reply: "250 ok"), now: 1_001, jitter: 0.5) == .markSent(reply: "250 ok"))
        #expect(life.state == .sent)
        #expect(life.attempted(.sent(reply: "250 again"), now: 1_002, jitter: 0) == .none)
    }

    @Test("a 5xx is dead and suppresses the recipient")
    func permanentFailure() {
        var life = claimed()
        #expect(life.attempted(.permanent(reply: "550 no such user"), now: 1_001, jitter: 0) == .markDead(reply: "550 no such user", suppress: true))
        #expect(life.state == .dead(.rejected))
    }

    @Test("transient failures back off 30 s doubling to 1 h, shortened by up to a quarter of jitter")
    func backoff() {
        #expect(policy.delay(afterFailedAttempts: 1, jitter: 0) == 30)
        #expect(policy.delay(afterFailedAttempts: 2, jitter: 0) == 60)
        #expect(policy.delay(afterFailedAttempts: 3, jitter: 0) == 120)
        #expect(policy.delay(afterFailedAttempts: 7, jitter: 0) == 1_920)
        #expect(policy.delay(afterFailedAttempts: 8, jitter: 0) == 3_600)
        #expect(policy.delay(afterFailedAttempts: 500, jitter: 0) == 3_600)
        #expect(policy.delay(afterFailedAttempts: 1, jitter: 0.999) == 23)
        #expect(policy.delay(afterFailedAttempts: 8, jitter: 1) == 2_700)
        #expect(policy.delay(afterFailedAttempts: 3, jitter: .nan) == 120)
    }

    @Test("a 4xx schedules a retry with the jittered delay and counts the attempt")
    func transientRetry() {
        var life = claimed(giveUpAt: 100_000)
        #expect(life.attempted(.transient(reply: "451 try later", connectionFailed: false), now: 1_010, jitter: 0) == .retry(at: 1_040, reply: "451 try later"))
        #expect(life.state == .retrying(at: 1_040))
        #expect(life.failedAttempts == 1)
        #expect(life.claim(owner: "w2", now: 1_039) == .none, "not due yet")
        #expect(life.claim(owner: "w2", now: 1_040) == .deliver)
        #expect(life.attempted(.transient(reply: "421 busy", connectionFailed: true), now: 1_050, jitter: 0.5) == .retry(at: 1_050 + 53, reply: "421 busy"))
    }

    @Test("a retry that would land after the link's expiry gives up instead")
    func expiryStopsRetries() {
        var life = claimed(createdAt: 1_000, giveUpAt: 1_020)
        let action = life.attempted(.transient(reply: "451 later", connectionFailed: false), now: 1_001, jitter: 0)
        #expect(action == .markDead(reply: "gave up after 1 attempts: 451 later", suppress: false))
        #expect(life.state == .dead(.expired))
    }

    @Test("an expired sign-in link is never sent late: claiming at or after the deadline kills it")
    func neverSentLate() {
        var life = DeliveryStateMachine(deadline: policy.deadline(createdAt: 1_000, giveUpAt: 1_600), policy: policy)
        guard case .markDead(_, let suppress) = life.claim(owner: "w1", now: 1_600) else {
            Issue.record("expected dead")
            return
        }
        #expect(!suppress)
        #expect(life.state == .dead(.expired))
        var held = claimed(createdAt: 1_000, giveUpAt: 1_600)
        guard case .markDead = held.prepare(now: 1_600, isSuppressed: false, hasMail: true) else {
            Issue.record("a message whose deadline passed while claimed must not be delivered")
            return
        }
    }

    @Test("after 24 hours a message is abandoned even if its link lives longer")
    func maximumAge() {
        #expect(policy.deadline(createdAt: 1_000, giveUpAt: 1_000 + 259_200) == 1_000 + 86_400)
        #expect(policy.deadline(createdAt: 1_000, giveUpAt: 1_600) == 1_600)
        #expect(policy.deadline(createdAt: .max - 10, giveUpAt: .max) == .max)
    }

    @Test("a suppressed recipient is dead without sending; nothing to send finishes as sent")
    func prepare() {
        var suppressed = claimed()
        #expect(suppressed.prepare(now: 1_001, isSuppressed: true, hasMail: true) == .markDead(reply: "not sent: the recipient is suppressed", suppress: false))
        #expect(suppressed.state == .dead(.suppressed))
        var nothing = claimed()
        #expect(nothing.prepare(now: 1_001, isSuppressed: false, hasMail: false) == .markSent(reply: "nothing to send"))
        var normal = claimed()
        #expect(normal.prepare(now: 1_001, isSuppressed: false, hasMail: true) == .deliver)
    }

    @Test("an expired lease lets another worker claim; a live one does not")
    func leaseExpiry() {
        var life = claimed()
        #expect(life.claim(owner: "w2", now: 1_000 + policy.lease - 1) == .none)
        #expect(life.claim(owner: "w2", now: 1_000 + policy.lease) == .deliver)
        #expect(life.state == .claimed(owner: "w2", until: 1_000 + 2 * policy.lease))
    }

    @Test("releasing returns a message untried: queued when never tried, retrying otherwise")
    func release() {
        var fresh = claimed()
        _ = fresh.release(at: 1_005)
        #expect(fresh.state == .queued)
        var tried = claimed(failed: 2)
        _ = tried.release(at: 1_005)
        #expect(tried.state == .retrying(at: 1_005))
    }

    @Test("SMTP reply codes are classified: 2xx sent, 421 connection, 4xx transient, 5xx permanent")
    func classify() {
        #expect(DeliveryOutcome.classify(replyCode: 250, reply: "250 ok") == .sent(reply: "250 ok"))
        #expect(DeliveryOutcome.classify(replyCode: 421, reply: "421 bye") == .transient(reply: "421 bye", connectionFailed: true))
        #expect(DeliveryOutcome.classify(replyCode: 451, reply: "451 later") == .transient(reply: "451 later", connectionFailed: false))
        #expect(DeliveryOutcome.classify(replyCode: 550, reply: "550 no") == .permanent(reply: "550 no"))
        #expect(DeliveryOutcome.classify(replyCode: 0, reply: "refused") == .transient(reply: "refused", connectionFailed: true))
        // A server's words are cleaned before the record, the log and a suppression's reason keep them.
        let quoted = "550 5.7.1 <bob@example.org> blocked: https://auth.example.com/action?mode=signIn&oobCode=AbCdEf0123456789AbCdEf0123"
        #expect(DeliveryOutcome.classify(replyCode: 550, reply: quoted) == .permanent(reply: "550 5.7.1 <address> blocked: <link>"))
        #expect(DeliveryOutcome.classify(httpStatus: 400, reply: "HTTP 400 bad to: bob@example.org") == .permanent(reply: "HTTP 400 bad to: <address>"))
    }

    @Test("HTTP provider answers: any 2xx sent (202 too), 429/5xx/401/403 retried with the batch, 408 retried, other 4xx dead")
    func classifyHTTP() {
        for status in [200, 201, 202, 204, 299] {
            #expect(DeliveryOutcome.classify(httpStatus: status, reply: "HTTP \(status)") == .sent(reply: "HTTP \(status)"))
        }
        for status in [0, 301, 401, 403, 429, 500, 502, 503, 504] {
            #expect(DeliveryOutcome.classify(httpStatus: status, reply: "r") == .transient(reply: "r", connectionFailed: true))
        }
        for status in [408, 425] {
            #expect(DeliveryOutcome.classify(httpStatus: status, reply: "r") == .transient(reply: "r", connectionFailed: false))
        }
        for status in [400, 404, 410, 413, 422] {
            #expect(DeliveryOutcome.classify(httpStatus: status, reply: "r") == .permanent(reply: "r"))
        }
    }

    @Test("the claimable states are exactly the recorded states claim takes a due message from")
    func claimableStatesMatchClaim() {
        let due: Int64 = 1_000
        let lives: [DeliveryStateMachine.State] = [
            .queued, .claimed(owner: "w1", until: due), .retrying(at: due), .sent, .dead(.rejected),
        ]
        for state in lives {
            var life = DeliveryStateMachine(state: state, deadline: 10_000, policy: policy)
            let recorded = life.recordedState
            let taken = life.claim(owner: "w2", now: due) == .deliver
            #expect(taken == DeliveryStateMachine.claimableStates.contains(recorded), "\(recorded)")
        }
        #expect(Set(lives.map { DeliveryStateMachine(state: $0, deadline: 1, policy: policy).recordedState }) == Set(OutboxState.allCases))
    }
}
