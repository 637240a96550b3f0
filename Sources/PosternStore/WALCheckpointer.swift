import Foundation
import PosternCore
import Synchronization

/// Copies the WAL back into the database file on a thread and connection of its own, so that the
/// writer's commits seldom do it.
///
/// By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
/// commit syncs the WAL, copies its pages and syncs the database file while every caller of its
/// batch waits — and under a drain every delivery worker's next final "." waits for such a commit,
/// some fifteen times a second. Here the writer's commits checkpoint only at
/// ``commitCheckpointPages`` (``deferCommitCheckpoints(on:pages:)``), and this thread runs a
/// PASSIVE checkpoint about every ``interval`` while commits come: it never waits for the writer,
/// which goes on committing meanwhile, and copies most pages early, so the commit that does
/// checkpoint finds little left to copy.
///
/// Why the commits still checkpoint at all: a WAL starts over from its beginning only when a write
/// begins with every frame copied. Under commits that never pause, a checkpoint running beside
/// them never sees that moment, and the WAL would grow without end; the commit's checkpoint is
/// what bounds it. That one is PASSIVE (as SQLite's own autocheckpoint), and every checkpoint
/// gives up at once, busy handler or not, when another connection's holds the checkpoint lock: on
/// a loaded machine this thread's round and the commit's met at every commit and the WAL grew past
/// 28 MB where 2.4 MB was meant (WALCheckpointerTests, 2026-12-07). So once a commit leaves the WAL
/// at four times the commit checkpoint size, the writer waits for this thread's round to end
/// (``round``, which the thread holds around each checkpoint) and runs a RESTART while holding it:
/// that copies every frame (waiting for readers of older snapshots through the busy handler) and
/// the next commit writes the WAL from its start. The WAL stays under about 4 × 40 MB, whatever
/// the timing; the writer waits only then, and only for one round.
///
/// The thread runs only while there are commits: it starts at the first one, and after
/// ``idleExit`` without any it closes its connection and ends, so an idle store holds no thread
/// and no file handle for it. Durability is not its job: the writer's fsyncs, and its own flush of
/// the commits it made without one, are unchanged (a checkpoint only syncs the WAL more often).
/// Its waits are on real time, not an injected clock: it decides nothing a test must see at a
/// given moment, only how soon pages are copied.
///
/// `@unchecked Sendable`: `state` is only touched under its mutex, and the connection only by the
/// thread that opened it.
final class WALCheckpointer: @unchecked Sendable {
    /// Seconds a commit's pages wait in the WAL, at most, before a checkpoint looks at them.
    static let interval = 0.05
    /// Seconds without commits before the thread ends.
    static let idleExit = 1.0
    /// The WAL size, in pages, at which the writer's commit checkpoints (40 MB of 4 KB pages).
    static let commitCheckpointPages = 10_000

    private struct State {
        var running = false
        var closed = false
        /// Signalled by the thread as it ends.
        var ended: DispatchSemaphore?
    }

    private let path: String
    /// The writer's commit checkpoint size, in pages.
    private let commitPages: Int
    /// Seconds between rounds.
    private let roundInterval: Double
    /// Held by the thread around each checkpoint, and by the writer around its RESTART, so that
    /// neither finds the checkpoint lock taken by the other.
    private let round = NSLock()
    /// Set by every commit, taken by each round of the thread.
    private let pending = Atomic<Bool>(false)
    private let state = Mutex(State())
    /// Checkpoints run so far (for tests).
    let checkpoints = Atomic<Int>(0)

    /// `commitPages`: the writer's commit checkpoint size (``deferCommitCheckpoints(on:pages:)``);
    /// `interval`: seconds between rounds (tests make it 0 to have a round beside every commit).
    init(path: String, commitPages: Int = commitCheckpointPages, interval: Double = interval) {
        self.path = path
        self.commitPages = commitPages
        roundInterval = interval
    }

    /// Has the writer's connection checkpoint after a commit only once the WAL holds `pages`
    /// (``SQLiteConnection/boundWAL(pages:)``).
    static func deferCommitCheckpoints(on connection: SQLiteConnection, pages: Int = commitCheckpointPages) throws {
        connection.boundWAL(pages: pages)
    }

    /// After a commit on the writer's `connection`: when the WAL has grown to four times the commit
    /// checkpoint size (the commit's PASSIVE checkpoint kept meeting this thread's), a RESTART
    /// between two rounds; then a checkpoint follows within the interval. Cheap when one is due.
    func noteCommit(on connection: SQLiteConnection) {
        if connection.walFrames >= 4 * commitPages {
            round.lock()
            _ = try? connection.execute("PRAGMA wal_checkpoint(RESTART)")
            round.unlock()
        }
        noteCommit()
    }

    /// After a commit: a checkpoint follows within ``interval``. Cheap when one is already due.
    func noteCommit() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let ended = state.withLock { state -> DispatchSemaphore? in
            guard !state.running, !state.closed else { return nil }
            state.running = true
            let ended = DispatchSemaphore(value: 0)
            state.ended = ended
            return ended
        }
        guard let ended else { return }
        Thread.start(named: "wal-checkpoint") { [self] in
            run()
            ended.signal()
        }
    }

    /// Whether the thread runs now (for tests).
    var isRunning: Bool { state.withLock { $0.running } }

    /// Ends the thread (after its round in progress) and starts no other.
    func close() {
        let ended = state.withLock { state -> DispatchSemaphore? in
            state.closed = true
            return state.running ? state.ended : nil
        }
        ended?.wait()
    }

    private func run() {
        guard let connection = try? SQLiteConnection(path: path) else {
            // No connection (out of file handles): the commits' own checkpoints still bound the
            // WAL. Tried again by a commit after a pause, not by every one. `running` goes first:
            // a commit noted between the two lines starts nothing, the one after it starts anew.
            Thread.sleep(forTimeInterval: Self.idleExit)
            state.withLock { $0.running = false }
            pending.store(false, ordering: .releasing)
            return
        }
        var quietSince = ContinuousClock.now
        while true {
            if roundInterval > 0 { Thread.sleep(forTimeInterval: roundInterval) }
            if pending.exchange(false, ordering: .acquiringAndReleasing) {
                // PASSIVE never waits for readers or the writer and never calls the busy handler;
                // busy (another checkpoint runs) is tried again next round.
                round.lock()
                let done = (try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")) != nil
                round.unlock()
                if done {
                    checkpoints.add(1, ordering: .relaxed)
                } else {
                    pending.store(true, ordering: .releasing)
                }
                quietSince = ContinuousClock.now
            }
            let quiet = ContinuousClock.now - quietSince >= .seconds(Self.idleExit)
            let stop = state.withLock { state -> Bool in
                // Checked under the lock `noteCommit` starts a thread under: a commit noted after
                // this finds `running` false and starts the next thread.
                guard state.closed || (quiet && !pending.load(ordering: .acquiring)) else { return false }
                state.running = false
                return true
            }
            if stop { return }
        }
    }
}
