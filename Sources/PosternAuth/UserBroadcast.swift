import Foundation

/// The current user and the streams that follow it: `PosternAuth.user` reads it without waiting
/// for the actor, `userUpdates` subscribes to it.
final class UserBroadcast: @unchecked Sendable {
    // `lock` guards `current` and `subscribers`.
    private let lock = NSLock()
    private var current: User?
    private var subscribers: [UUID: AsyncStream<User?>.Continuation] = [:]

    init(_ user: User?) { current = user }

    var user: User? { lock.withLock { current } }

    /// A stream that yields the current user at once, then every change, until it is dropped.
    func stream() -> AsyncStream<User?> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: User?.self, bufferingPolicy: .bufferingNewest(16))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.subscribers.removeValue(forKey: id) }
        }
        lock.withLock {
            subscribers[id] = continuation
            continuation.yield(current)
        }
        return stream
    }

    /// Makes `user` current; subscribers hear of it when it differs from what they last heard.
    func publish(_ user: User?) {
        let listeners: [AsyncStream<User?>.Continuation] = lock.withLock {
            guard current != user else { return [] }
            current = user
            return Array(subscribers.values)
        }
        for listener in listeners { listener.yield(user) }
    }
}
