import Foundation
import PosternCore
@testable import PosternStore
import PosternTestSupport
import Testing

@Suite("the WAL is checkpointed beside the writer's commits, and stays bounded")
struct WALCheckpointerTests {
    static let recipient = try! EmailAddress.parse("wal@example.com")

    /// `commits` commits of `mails` queued mails each, back to back. Without `synced` they commit
    /// as delivery outcomes do under a drain (no fsync each); with it, as requests do, so that the
    /// writer never flushes by a checkpoint of its own (it does after a pause in unsynced commits,
    /// and a loaded machine makes such pauses).
    static func fill(_ store: SQLiteStore, commits: Int, mails: Int = 4, synced: Bool = false) throws {
        for commit in 0..<commits {
            let change: @Sendable (any StoreWriter) throws -> Void = { writer in
                for index in 0..<mails {
                    _ = try writer.enqueue(.signIn(requestID: "w\(commit)-\(index)"), recipient: recipient, now: 100, giveUpAt: 10_000)
                }
            }
            if synced { try store.write(change) } else { try store.writeSyncingLater(change) }
        }
    }

    static func bytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    static func store(_ database: TemporaryDatabase, background: Bool, pages: Int = WALCheckpointer.commitCheckpointPages) throws -> SQLiteStore {
        try SQLiteStore(
            path: database.path, clock: SystemMonotonicClock(), phoneSeal: PhoneSealSlot(), backgroundCheckpoints: background,
            commitCheckpointPages: pages)
    }

    @Test("commits no longer checkpoint at SQLite's 1,000 pages; the checkpointer copies the WAL into the file meanwhile")
    func copiedBesideTheCommits() throws {
        // Alone, the writer's commits leave the WAL to grow past SQLite's default of 1,000 pages
        // (4 MB) and copy nothing into the database file.
        let control = try TemporaryDatabase()
        let alone = try Self.store(control, background: false)
        try Self.fill(alone, commits: 300, mails: 40, synced: true)
        let grown = Self.bytes(control.path + "-wal")
        let untouched = Self.bytes(control.path)
        #expect(grown > 1_000 * 4_096 + 4_096, "the commits checkpointed by themselves: the WAL has only \(grown) bytes")

        // Beside the checkpointer the same commits are copied into the file while they come.
        let database = try TemporaryDatabase()
        let store = try Self.store(database, background: true)
        try Self.fill(store, commits: 300, mails: 40, synced: true)
        #expect(eventually(within: 20) { store.backgroundCheckpoints > 0 })
        #expect(eventually(within: 20) { Self.bytes(database.path) > 4 * untouched },
            "the database file has \(Self.bytes(database.path)) bytes, \(untouched) without the checkpointer")

        // Nothing is lost on the way: every queued mail is there for a new connection.
        store.close()
        alone.close()
        for path in [database.path, control.path] {
            let reopened = try SQLiteStore(path: path)
            #expect(try reopened.read { try $0.outboxUnfinishedCount() } == 12_000)
            reopened.close()
        }
    }

    @Test("under commits that never pause, the WAL stops at the commits' checkpoint size")
    func boundedUnderSteadyCommits() throws {
        // A checkpoint beside commits that never pause never finds the moment the WAL could start
        // over; the commit's own checkpoint, at a size made small here (300 pages), bounds it:
        // PASSIVE at 300, RESTART at 1,200 when PASSIVE kept meeting the checkpointer's round.
        let database = try TemporaryDatabase()
        let store = try Self.store(database, background: true, pages: 300)
        try Self.fill(store, commits: 3_000)
        let wal = Self.bytes(database.path + "-wal")
        // (SQLite's default of 1,000 pages would leave it at 4 MB; with no commit checkpoint at all
        // it grew past 30 MB in this test, and with a PASSIVE one alone past 28 MB on a loaded machine.)
        #expect(wal < 4 * 300 * 4_120 + 64 * 4_120, "the WAL grew to \(wal) bytes")
        store.close()
    }

    @Test("the checkpointer's rounds beside every commit do not let the WAL grow: the writer restarts it between two rounds")
    func boundedWhileTheCheckpointerRunsBesideEveryCommit() throws {
        // The timing a loaded machine made by chance, made on purpose: the checkpointer's rounds
        // follow each other with no pause, so the commit's PASSIVE checkpoint finds the lock
        // taken whenever they meet (with that alone the WAL grew to 23–26 MB here).
        let database = try TemporaryDatabase()
        let store = try SQLiteStore(
            path: database.path, clock: SystemMonotonicClock(), phoneSeal: PhoneSealSlot(), backgroundCheckpoints: true,
            commitCheckpointPages: 100, checkpointInterval: 0)
        var largest = 0
        for _ in 0..<30 {
            try Self.fill(store, commits: 100)
            largest = max(largest, Self.bytes(database.path + "-wal"))
        }
        #expect(largest < 4 * 100 * 4_120 + 64 * 4_120, "the WAL grew to \(largest) bytes")
        store.close()
        let reopened = try SQLiteStore(path: database.path)
        #expect(try reopened.read { try $0.outboxUnfinishedCount() } == 12_000)
        reopened.close()
    }

    @Test("the checkpointer runs while commits come, ends when they stop, starts again, and close ends it")
    func lifecycle() throws {
        let database = try TemporaryDatabase()
        let store = try SQLiteStore(path: database.path)
        #expect(!store.checkpointerRunning, "no thread before the first commit")
        try Self.fill(store, commits: 1)
        #expect(store.checkpointerRunning)
        #expect(eventually(within: 20) { store.backgroundCheckpoints == 1 })
        // Idle: the thread ends on its own, and with it its connection.
        #expect(eventually(within: 20) { !store.checkpointerRunning })
        try Self.fill(store, commits: 1)
        #expect(eventually(within: 20) { store.backgroundCheckpoints == 2 }, "a later commit starts it again")
        try Self.fill(store, commits: 1)
        store.close()
        #expect(!store.checkpointerRunning, "close returns once the thread has ended")
    }
}
