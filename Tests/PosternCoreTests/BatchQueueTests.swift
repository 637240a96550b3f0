import Foundation
import PosternCore
import Synchronization
import PosternTestSupport
import Testing

@Suite("Batch queue")
struct BatchQueueTests {
    @Test("items come out oldest first, in batches of at most the asked size")
    func batchesInOrder() {
        let queue = BatchQueue<Int>()
        for n in 0..<10 { #expect(queue.append(n)) }
        guard case .items(let first) = queue.take(upTo: 4) else {
            Issue.record("no items")
            return
        }
        #expect(first == [0, 1, 2, 3])
        #expect(queue.takeWaiting(upTo: 3) == [4, 5, 6])
        guard case .items(let rest) = queue.take(upTo: 100) else {
            Issue.record("no items")
            return
        }
        #expect(rest == [7, 8, 9])
        #expect(queue.takeWaiting(upTo: 5).isEmpty)
    }

    @Test("taking one at a time from a long queue keeps the order across the internal compaction")
    func oneAtATime() {
        let queue = BatchQueue<Int>()
        for n in 0..<500 { queue.append(n) }
        var seen: [Int] = []
        for n in 500..<700 {
            seen += queue.takeWaiting(upTo: 1)
            queue.append(n)
        }
        while case .items(let batch) = queue.take(upTo: 7, until: .zero) { seen += batch }
        #expect(seen == Array(0..<700))
    }

    @Test("a take with a deadline times out only when the clock reaches it")
    func deadline() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(clock: clock)
        #expect(isTimedOut(queue.take(upTo: 1, until: clock.now())))
        let result = Mutex<String>("")
        let done = DispatchSemaphore(value: 0)
        let deadline = clock.now() + .milliseconds(200)
        Thread {
            let take = queue.take(upTo: 1, until: deadline)
            result.withLock { $0 = isTimedOut(take) ? "timed out" : "other" }
            done.signal()
        }.start()
        #expect(clock.waitUntilSettled(waiters: 1))
        clock.advance(by: .milliseconds(199))
        #expect(clock.waitUntilSettled(waiters: 1), "still waiting short of the deadline")
        #expect(result.withLock { $0 } == "")
        clock.advance(by: .milliseconds(1))
        done.wait()
        #expect(result.withLock { $0 } == "timed out")
    }

    @Test("a waiting consumer that is not gathering is woken by an append, urgent or not", arguments: [true, false])
    func appendWakes(urgent: Bool) {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(clock: clock)
        let taken = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            if case .items(let batch) = queue.take(upTo: 10) { taken.withLock { $0 = batch } }
            done.signal()
        }.start()
        #expect(clock.waitUntilSettled(waiters: 1))
        queue.append(42, urgent: urgent)
        done.wait()
        #expect(taken.withLock { $0 } == [42])
    }

    /// Starts a consumer that gathers once, for 500 ms of the clock from now.
    private func startGathering(_ queue: BatchQueue<Int>, clock: ManualMonotonicClock, quorum: Int) -> Gathering {
        let gathering = Gathering()
        let deadline = clock.now() + .milliseconds(500)
        Thread {
            let take = queue.gather(upTo: 100, until: deadline, quorum: quorum)
            gathering.result.withLock { $0 = take }
            gathering.done.signal()
        }.start()
        return gathering
    }

    /// Starts a consumer that gathers once, lets it wait, runs `act`, and waits until it returns.
    private func gathered(_ queue: BatchQueue<Int>, clock: ManualMonotonicClock, quorum: Int, after act: () -> Void) -> Gathering {
        let gathering = startGathering(queue, clock: clock, quorum: quorum)
        #expect(clock.waitUntilSettled(waiters: 1))
        act()
        gathering.done.wait()
        return gathering
    }

    @Test("a gathering consumer is not woken item by item: items that are not urgent wait for the deadline, short of the quorum")
    func gatherWaitsForDeadline() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(clock: clock)
        let gathering = startGathering(queue, clock: clock, quorum: 3)
        #expect(clock.waitUntilSettled(waiters: 1))
        let wakeUps = clock.wakeUps
        queue.append(1, urgent: false)
        queue.append(2, urgent: false)
        // Short of the deadline it still waits (the clock's one waiter), with nothing returned.
        clock.advance(by: .milliseconds(499))
        #expect(clock.waitUntilSettled(waiters: 1), "still gathering short of the deadline")
        #expect(gathering.items == nil, "two of three do not end the gathering")
        clock.advance(by: .milliseconds(1))
        gathering.done.wait()
        #expect(gathering.items == [1, 2], "both come out together at the deadline")
        // Counted once the thread has returned, so every wake-up it had is in: only the deadline's.
        #expect(clock.wakeUps == wakeUps + 1, "the items did not wake the gathering thread")
    }

    @Test("a gathering consumer returns at its quorum, at an urgent item, or with nothing at its deadline")
    func gatherEnds() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(clock: clock)

        let quorum = gathered(queue, clock: clock, quorum: 3) { for n in 1...3 { queue.append(n, urgent: false) } }
        #expect(quorum.items == [1, 2, 3], "the quorum-th item ends it, the clock never moved")

        let urgent = gathered(queue, clock: clock, quorum: 3) {
            queue.append(4, urgent: false)
            queue.append(5)
        }
        #expect(urgent.items == [4, 5], "an urgent item ends it")

        // An urgent item queued before the gathering started ends it at once too.
        queue.append(6)
        queue.append(7, urgent: false)
        let queuedBefore = startGathering(queue, clock: clock, quorum: 5)
        queuedBefore.done.wait()
        #expect(queuedBefore.items == [6, 7])

        let empty = gathered(queue, clock: clock, quorum: 2) { clock.advance(by: .milliseconds(500)) }
        #expect(empty.result.withLock { $0 }.map(isTimedOut) == true)
    }

    @Test("closing ends a gathering: what was queued is still handed out, then the queue says closed")
    func closeEndsGathering() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(clock: clock)
        let gathering = gathered(queue, clock: clock, quorum: 4) {
            queue.append(43, urgent: false)
            queue.close()
        }
        #expect(gathering.items == [43], "what was queued is still handed out")
        #expect(isClosed(queue.gather(upTo: 1, until: clock.now() + .seconds(1), quorum: 1)))
    }

    @Test("closing refuses new items but hands out the queued ones before saying closed")
    func closeDrains() {
        let queue = BatchQueue<Int>()
        queue.append(1)
        queue.append(2)
        queue.close()
        #expect(queue.isClosed)
        #expect(queue.append(3) == false)
        #expect(queue.appendUnlessWaiting(3) == false)
        guard case .items(let batch) = queue.take(upTo: 10) else {
            Issue.record("the queued items were dropped")
            return
        }
        #expect(batch == [1, 2])
        #expect(isClosed(queue.take(upTo: 10)))
        #expect(isClosed(queue.take(upTo: 10, until: .zero)))
    }

    @Test("a wake-up token is queued once however often it is offered")
    func tokensCoalesce() {
        let queue = BatchQueue<Int>()
        for n in 0..<100 { #expect(queue.appendUnlessWaiting(n)) }
        #expect(queue.takeWaiting(upTo: .max) == [0])
        queue.appendUnlessWaiting(7)
        #expect(queue.takeWaiting(upTo: .max) == [7])
    }

    @Test("closing wakes every waiting consumer, and the closer can wait for them all to end")
    func closeWakesAndWaitsForConsumers() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(consumers: 3, clock: clock)
        let handled = Mutex(0)
        for _ in 0..<3 {
            Thread {
                while case .items(let batch) = queue.take(upTo: 1) { handled.withLock { $0 += batch.count } }
                queue.consumerEnded()
            }.start()
        }
        #expect(clock.waitUntilSettled(waiters: 3))
        for n in 0..<20 { queue.append(n) }
        queue.close()
        #expect(queue.waitForConsumers())
        #expect(handled.withLock { $0 } == 20)
    }

    @Test("waiting for consumers gives up at its deadline")
    func consumersDeadline() {
        let clock = ManualMonotonicClock()
        let queue = BatchQueue<Int>(consumers: 1, clock: clock)
        queue.close()
        #expect(queue.waitForConsumers(until: clock.now()) == false)
        #expect(queue.consumerEnded())
        #expect(queue.waitForConsumers(until: clock.now()))
    }

    @Test("many producers and consumers: every item is taken exactly once")
    func manyThreads() {
        let queue = BatchQueue<Int>(consumers: 4)
        let taken = Mutex<[Int]>([])
        for _ in 0..<4 {
            Thread {
                while case .items(let batch) = queue.take(upTo: 8) { taken.withLock { $0 += batch } }
                queue.consumerEnded()
            }.start()
        }
        DispatchQueue.concurrentPerform(iterations: 4) { producer in
            for n in 0..<2_000 { queue.append(producer * 10_000 + n) }
        }
        queue.close()
        #expect(queue.waitForConsumers())
        let all = taken.withLock { $0 }.sorted()
        #expect(all == (0..<4).flatMap { producer in (0..<2_000).map { producer * 10_000 + $0 } })
    }
}

private func isTimedOut<Item>(_ take: BatchQueue<Item>.Take) -> Bool {
    if case .timedOut = take { return true }
    return false
}

private func isClosed<Item>(_ take: BatchQueue<Item>.Take) -> Bool {
    if case .closed = take { return true }
    return false
}

/// One gathering consumer's result, set once by its thread.
private final class Gathering: Sendable {
    let result = Mutex<BatchQueue<Int>.Take?>(nil)
    let done = DispatchSemaphore(value: 0)

    /// The items it got; nil while it waits, or when it got none.
    var items: [Int]? {
        result.withLock { take in
            if case .items(let items) = take { return items }
            return nil
        }
    }
}
