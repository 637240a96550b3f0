import Foundation

/// Where one answer handed over from another thread is waited for: the result of a closure that
/// ran on the store's writer thread, or of a request answered from its commit. The one place a
/// caller turns "called back once with the answer" into "returns the answer", so each path that
/// can answer later (``QueuedWriteStore``, the flows' `then:` variants, the router's routes that
/// answer from a commit) has its blocking form written once, as that path plus a wait.
///
/// `@unchecked Sendable`: `value` is written once, by the thread that calls ``set(_:)``, before
/// the semaphore is signalled, and read by the waiting thread only after it is.
public final class AnswerSlot<Value, Failure: Error>: @unchecked Sendable {
    private var value: Result<Value, Failure>?
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    /// Hands the answer over; called once.
    public func set(_ result: Result<Value, Failure>) {
        value = result
        semaphore.signal()
    }

    /// Waits for the answer. `missing` is what a signal without an answer means (it cannot happen
    /// through ``set(_:)``; the parameter keeps the type free of a force-unwrap).
    public func wait(missing: @autoclosure () -> Failure) throws(Failure) -> Value {
        semaphore.wait()
        guard let value else { throw missing() }
        return try value.get()
    }

    /// Runs `start`, which hands its answer to the closure it is given (at once, or later from
    /// another thread), and waits for that answer. What `start` throws before answering is thrown.
    public static func waiting(
        missing: @autoclosure () -> Failure,
        _ start: (@escaping @Sendable (Result<Value, Failure>) -> Void) throws(Failure) -> Void
    ) throws(Failure) -> Value {
        let slot = AnswerSlot()
        try start { slot.set($0) }
        return try slot.wait(missing: missing())
    }
}
