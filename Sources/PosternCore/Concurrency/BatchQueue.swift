import Foundation

/// A queue between threads that hands items out in batches: the one lock-and-condition queue the
/// daemon's background threads share (the store's group commit, the outbox's outcome recorder and
/// wake-ups, the HTTP request threads), so waiting, batching and closing are written once.
///
/// - ``append(_:urgent:)`` queues an item and wakes one consumer; it refuses once the queue is
///   closed. An item that is not urgent does not wake a consumer that gathers (below) short of
///   its quorum.
/// - ``take(upTo:until:)`` waits for items and returns up to that many, oldest first, or says the
///   deadline passed or the queue is closed and empty: items queued before ``close()`` are still
///   handed out, so closing never drops work.
/// - ``gather(upTo:until:quorum:)`` waits the same way for more items to join a batch, but is not
///   woken by each one: only by the quorum-th queued item, an urgent one, the deadline or closing.
/// - Consumers say when they end (``consumerEnded()``), so whoever closes can wait for them
///   (``waitForConsumers(until:)``).
///
/// Timed waits go through the injected ``MonotonicClock``, so tests move a manual clock instead
/// of sleeping.
///
/// `@unchecked Sendable`: `items`, `head`, `closed` and `consumers` are only touched with
/// `condition` locked.
public final class BatchQueue<Item: Sendable>: @unchecked Sendable {
    /// What a ``take(upTo:until:)`` came to.
    public enum Take: Sendable {
        /// Up to the asked number of items, oldest first; never empty.
        case items([Item])
        /// The deadline passed with nothing queued.
        case timedOut
        /// The queue is closed and everything queued was taken.
        case closed
    }

    // @usableFromInline and @inlinable below: the queue is generic and used from other modules on
    // every request (the request workers, the store's writer); unspecialized, each call looked
    // its generic metadata up at run time.
    @usableFromInline let condition = NSCondition()
    @usableFromInline let clock: any MonotonicClock
    /// Queued items from `head` on; the taken ones before it are dropped in bulk, so taking one at
    /// a time does not shift the whole array each time.
    @usableFromInline var items: [Item] = []
    @usableFromInline var head = 0
    @usableFromInline var closed = false
    @usableFromInline var consumers: Int
    /// While a consumer gathers: how many queued items wake it. Non-urgent appends short of it do
    /// not signal (each signal woke the gathering thread once per item, only to wait again).
    @usableFromInline var quorum: Int?
    /// Items taken so far, and how many had been appended when the last urgent one was (counting
    /// it): an urgent item is queued while that count is past what was taken.
    @usableFromInline var takenTotal = 0
    @usableFromInline var urgentThrough = 0

    /// An open, empty queue taken from by `consumers` threads, timing its waits on `clock`.
    public init(consumers: Int = 1, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.consumers = max(0, consumers)
        self.clock = clock
    }

    /// Queues `item` and wakes a consumer, unless `item` is not `urgent` and a consumer gathers
    /// short of its quorum (it takes the item at its deadline). False once closed (the item is not
    /// queued).
    ///
    /// The one thread `close()` may leave waiting on the condition besides consumers is one in
    /// ``waitForConsumers(until:)``, and only after `close()`, when nothing is appended any more:
    /// so this signal always reaches a consumer.
    @discardableResult @inlinable
    public func append(_ item: Item, urgent: Bool = true) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        items.append(item)
        if urgent { urgentThrough = takenTotal + items.count - head }
        if urgent || quorum.map({ items.count - head >= $0 }) ?? true { condition.signal() }
        return true
    }

    /// Queues `item` only when nothing is queued: for wake-up tokens, where one waiting says all
    /// that many would, and the queue stays one item long however often nobody takes. False once
    /// closed.
    @discardableResult @inlinable
    public func appendUnlessWaiting(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        if head == items.count {
            items.append(item)
            condition.signal()
        }
        return true
    }

    /// Waits until something is queued, the queue is closed, or the clock reaches `deadline` (nil:
    /// no deadline); then returns up to `limit` items, `.timedOut`, or `.closed` (closed and empty).
    @inlinable
    public func take(upTo limit: Int, until deadline: Duration? = nil) -> Take {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count {
            if closed { return .closed }
            if !clock.wait(on: condition, until: deadline), head == items.count, !closed { return .timedOut }
        }
        return .items(removeLocked(upTo: limit))
    }

    /// For a consumer that has a batch and waits a moment for more to join it: waits until
    /// `quorum` items are queued, an urgent one is, the queue is closed, or the clock reaches
    /// `deadline`; then returns up to `limit` items, `.timedOut` (nothing queued) or `.closed`.
    /// Items appended as not urgent meanwhile do not wake it one by one. One consumer at a time.
    @inlinable
    public func gather(upTo limit: Int, until deadline: Duration, quorum: Int) -> Take {
        condition.lock()
        defer { condition.unlock() }
        let quorum = max(1, quorum)
        self.quorum = quorum
        defer { self.quorum = nil }
        while !closed && urgentThrough <= takenTotal && items.count - head < quorum {
            if !clock.wait(on: condition, until: deadline) { break }
        }
        if head == items.count { return closed ? .closed : .timedOut }
        return .items(removeLocked(upTo: limit))
    }

    /// Up to `limit` items queued now, without waiting (none when nothing is queued).
    @inlinable
    public func takeWaiting(upTo limit: Int) -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        return removeLocked(upTo: limit)
    }

    @inlinable
    func removeLocked(upTo limit: Int) -> [Item] {
        let available = items.count - head
        guard available > 0 else { return [] }
        let count = min(max(1, limit), available)
        takenTotal += count
        let batch: [Item]
        if head == 0 && count == items.count {
            batch = items
            items = []
        } else {
            batch = Array(items[head..<(head + count)])
            head += count
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
        }
        // No wake-up is passed on when items are left: each append signalled once, so another
        // consumer is already woken for them (an extra signal per take woke threads for nothing).
        return batch
    }

    /// True once ``close()`` was called.
    public var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Refuses new items and wakes every consumer: each takes what is left, then gets `.closed`.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// A consumer is done (after its last `.closed`). True when it was the last one.
    @discardableResult
    public func consumerEnded() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        consumers = max(0, consumers - 1)
        condition.broadcast()
        return consumers == 0
    }

    /// Waits until every consumer has ended, or the clock reaches `deadline` (nil: no deadline).
    /// True when they all ended.
    public func waitForConsumers(until deadline: Duration? = nil) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while consumers > 0 {
            if !clock.wait(on: condition, until: deadline) { return consumers == 0 }
        }
        return true
    }
}
