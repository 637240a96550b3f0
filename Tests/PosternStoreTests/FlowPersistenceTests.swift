import Foundation
import PosternCore
import PosternCrypto
import PosternStore
import Testing
import PosternTestSupport

/// The flows over a real store of either kind, their keys sealed under the master key file.
struct StoreFlowHarness {
    let database: TestDatabase
    let flows: FlowHarness
    var store: any Store { flows.store }
    var clock: ManualClock { flows.clock }
    var service: AuthService { flows.service }

    init(_ kind: StoreKind, configure: (inout AuthConfiguration) -> Void = { _ in }, wrap: (any Store) -> any Store = { $0 }) throws {
        database = try kind.database()
        flows = try FlowHarness(wrap(try database.open()), box: try MasterKeyFile.loadOrCreate(at: database.keyFile), configure: configure)
    }

    /// Runs the content stage on the newest queued message and returns its link.
    func lastLink() throws -> String { try flows.lastLink() }
}

/// A real store that counts its transactions.
private final class CountingStore: Store {
    let base: any Store
    let reads = Counter()
    let writes = Counter()
    init(_ base: any Store) { self.base = base }
    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
        reads.increment()
        return try base.read(body)
    }
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        writes.increment()
        return try base.write(body)
    }
    func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        writes.increment()
        return try base.writeSyncingLater(body)
    }
    func close() { base.close() }
    var mailDoorbell: MailDoorbell { base.mailDoorbell }
    func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T? { try base.exclusively(lock, body) }
    var isConfinedToThisMachine: Bool { base.isConfinedToThisMachine }
}

@Suite("Flows persisted, on each store")
struct FlowPersistenceTests {
    @Test(
        "a worker's batch composes what each message composes alone, in order, its read-only ones in one read transaction; a message whose row cannot be read fails alone",
        arguments: StoreKind.available)
    func batchComposition(kind: StoreKind) throws {
        var counting: CountingStore?
        let h = try StoreFlowHarness(kind, wrap: { store in
            let wrapped = CountingStore(store)
            counting = wrapped
            return wrapped
        })
        let store = try #require(counting)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try {
            try h.service.emailLink.send(EmailLinkRequest(email: "old@example.com"))
            return try h.lastLink()
        }()))
        try h.service.emailLink.send(EmailLinkRequest(email: "old@example.com"))
        try h.service.emailLink.send(EmailLinkRequest(email: "new@example.com"))
        try h.service.passwords.signUp(email: "old@example.com", password: "correct horse", idToken: nil, continueURL: nil, locale: nil)
        try h.service.passwords.requestReset(email: "ghost@example.com", continueURL: nil, locale: nil)
        try h.service.passwords.requestReset(email: "old@example.com", continueURL: nil, locale: nil)
        try h.service.emailLink.send(EmailLinkRequest(email: "poison@example.com"))
        let queued = Array(try h.store.read { try $0.outboxMessages(state: .queued, limit: 6) }.reversed())
        #expect(queued.map(\.recipient.address) == [
            "old@example.com", "new@example.com", "old@example.com", "ghost@example.com", "old@example.com", "poison@example.com",
        ])
        // A row the store cannot read back (as a bad migration or a hand edit would leave it).
        guard case .signIn(let poisoned) = try #require(queued.last).intent else { throw CancellationError() }
        try h.database.withSQL { db in
            _ = try db.execute("UPDATE action_requests SET purpose = 'bogus' WHERE id = \(kind == .sqlite ? "?" : "$1")", [.text(poisoned)])
        }

        let (reads, writes) = (store.reads.value, store.writes.value)
        let batch = h.service.mailComposer.compose(queued.map { ($0.intent, $0.recipient) })
        // One read for the three sign-ins; the sign-up of a taken address and the two resets each
        // change their request, in a write of their own.
        #expect(store.reads.value - reads == 1)
        #expect(store.writes.value - writes == 3)
        #expect(batch.count == queued.count)
        let kinds = batch.map { result in (try? result.get()).map { $0?.message.kind } }
        #expect(kinds == [.signIn, .signIn, .accountAlreadyExists, .some(nil), .resetPassword, nil])
        #expect(throws: AuthError.self) { try batch[5].get() }

        // Alone, each composes to the same kind of mail (the reset and the sign-up were saved by
        // the batch, and compose the same again).
        for (index, message) in queued.enumerated().dropLast() {
            #expect(try h.service.mailComposer.compose(message.intent, recipient: message.recipient)?.message.kind == kinds[index] ?? nil)
        }
        // A link minted inside the shared transaction works.
        guard case .signIn(let link, _, _) = try #require(try batch[1].get()).message.content else { throw CancellationError() }
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
        #expect(login.email == "new@example.com" && login.isNewUser)
    }

    @Test("email link, sign-up, reset, change and recovery survive reopening the database", arguments: StoreKind.available)
    func flowsPersist(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind)
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        try h.service.passwords.signUp(email: "b@example.com", password: "correct horse", idToken: nil, continueURL: nil, locale: nil)
        let b = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        try h.service.passwords.requestReset(email: "b@example.com", continueURL: nil, locale: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "new password")
        let session = try h.service.sessions.refresh(login.session.refreshToken)
        try h.service.addresses.requestChange(idToken: session.idToken, newEmail: "c@example.com", continueURL: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        do {
            _ = try h.service.sessions.refresh(session.refreshToken)
            Issue.record("a session outlived the address change")
        } catch {
            #expect("\(error)".contains("TOKEN_REVOKED"), "\(error)")
        }

        let reopened = try h.database.open()
        let a = try #require(try reopened.read { try $0.account(uid: login.uid) })
        #expect(a.email?.address == "c@example.com")
        #expect(a.emailVerified)
        let bAccount = try #require(try reopened.read { try $0.account(uid: b.uid) })
        #expect(try PasswordHasher.verify("new password", against: #require(bAccount.passwordHash)))
        #expect(bAccount.providers == [.password, .emailLink])
        let token = try #require(try reopened.read { try $0.refreshToken(hash: SHA256.hash(session.refreshToken)) })
        #expect(token.uid == login.uid && token.revoked, "the address change ended every session")
        #expect(try reopened.read { try $0.refreshToken(hash: SHA256.hash(login.session.refreshToken)) }?.rotatedAt != nil)
        // What the tables hold in the clear: no refresh token, no code.
        if kind == .sqlite {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: h.database.location))
                + ((try? Data(contentsOf: URL(fileURLWithPath: h.database.location + "-wal"))) ?? Data())
            #expect(bytes.range(of: Data(session.refreshToken.utf8)) == nil)
        }
        let tokenHashes = try h.database.withSQL { db in
            var all: [UInt8] = []
            try db.query("SELECT token_hash FROM refresh_tokens") { all += $0.blob(0) ?? [] }
            return all
        }
        #expect(!tokenHashes.isEmpty)
        #expect(Data(tokenHashes).range(of: Data(session.refreshToken.utf8)) == nil)
    }
}

@Suite("Shared counters taken together, on PostgreSQL", .enabled(if: StoreKind.available.contains(.postgres)))
struct SharedCounterRestockTests {
    @Test("a request's counters this daemon holds no slice of (a new domain's cap, the total) are taken in one transaction; within the lease, in none")
    func coldCountersInOneTransaction() throws {
        var counting: CountingStore?
        let h = try StoreFlowHarness(.postgres, configure: {
            $0.mailPerHour = 0
            $0.mailCaps = MailCapConfiguration(domainPerHour: 1_000, totalPerHour: 1_000)
        }, wrap: { store in
            let wrapped = CountingStore(store)
            counting = wrapped
            return wrapped
        })
        let store = try #require(counting)
        func writes(_ email: String) throws -> Int {
            let before = store.writes.value
            try h.service.emailLink.send(EmailLinkRequest(email: email))
            return store.writes.value - before
        }
        // Both cold: one take for the two (slices of one), then the request's write; a take each
        // made it 3.
        #expect(try writes("a@one.example") == 2)
        // Both spent within the lease: again one take for the two (slices of two), and the write.
        #expect(try writes("b@one.example") == 2)
        // Both held: the request's write alone.
        #expect(try writes("c@one.example") == 1)
        // A new domain: its take alone (the total's slice still holds one), then the write.
        #expect(try writes("d@two.example") == 2)
        #expect(try h.store.read { try $0.outboxMessages(state: nil, limit: 10) }.count == 4)
    }
}
