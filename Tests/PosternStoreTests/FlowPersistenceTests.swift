import Foundation
import PosternCore
import PosternCrypto
import PosternStore
import Testing
import PosternTestSupport

/// The flows over a real store of either kind.
struct StoreFlowHarness {
    let database: TestDatabase
    let store: any Store
    let clock = ManualClock()
    let service: AuthService

    init(_ kind: StoreKind, configure: (inout AuthConfiguration) -> Void = { _ in }, wrap: (any Store) -> any Store = { $0 }) throws {
        database = try kind.database()
        store = wrap(try database.open())
        let vault = KeyVault(
            store: store, box: try MasterKeyFile.loadOrCreate(at: database.keyFile), clock: clock, maxCodeLifetime: 7 * 86_400)
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: ["app.example.com"])
        config.mailInterval = 0
        config.mailPerHour = 0
        configure(&config)
        service = try AuthService(
            store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config,
            hasher: .fastForTests)
    }

    /// Runs the content stage on the newest queued message and returns its link.
    func lastLink() throws -> String {
        let newest = try #require(try store.read { try $0.outboxMessages(state: nil, limit: 1) }.first)
        let composed = try #require(try service.mailComposer.compose(newest.intent, recipient: newest.recipient))
        switch composed.message.content {
        case .signIn(let link, _, _), .confirmSignUp(let link, _), .resetPassword(let link, _), .verifyEmail(let link, _),
            .verifyAndChangeEmail(let link, _, _, _), .recoverEmail(let link, _, _, _), .accountAlreadyExists(let link, _, _):
            return link
        default:
            throw CancellationError()
        }
    }
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

    @Test(
        "the batch's shared snapshot grants nothing: a request used before its batch composes gets no mail, and of two links composed from one request the second is refused once the first is used",
        arguments: StoreKind.available)
    func batchSnapshotGrantsNothing(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind)
        try h.service.emailLink.send(EmailLinkRequest(email: "used@example.com"))
        let used = try #require(try h.store.read { try $0.outboxMessages(state: .queued, limit: 1) }.first)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        try h.service.emailLink.send(EmailLinkRequest(email: "twice@example.com"))
        let twice = try #require(try h.store.read { try $0.outboxMessages(state: .queued, limit: 1) }.first)

        // The attacker's hope: a claim composed again (a crash between send and record, a second
        // daemon) mints a second live link for one request, or mail for a request already used.
        let batch = h.service.mailComposer.compose([(used.intent, used.recipient), (twice.intent, twice.recipient), (twice.intent, twice.recipient)])
        #expect(try batch[0].get() == nil)
        var links: [String] = []
        for result in batch.dropFirst() {
            guard case .signIn(let link, _, _) = try #require(try result.get()).message.content else { throw CancellationError() }
            links.append(link)
        }
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[0]))
        #expect(throws: AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[1])) }
        #expect(throws: AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[0])) }
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

    @Test("a failure in the middle of a flow leaves no half state", arguments: StoreKind.available)
    func noHalfState(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind)
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let link = try h.lastLink()
        let existing = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
        let anonymous = try h.service.sessions.signInAnonymously()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", idToken: anonymous.idToken))
        let second = try h.lastLink()
        // MIGRATION_REQUIRED is thrown after the transaction read the request and both accounts:
        // nothing of it may remain — the code still works afterwards.
        #expect(throws: AuthError.self) {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second, idToken: anonymous.idToken))
        }
        #expect(try h.store.read { try $0.account(uid: anonymous.uid) } != nil)
        let login = try h.service.emailLink.complete(
            EmailLinkCompletion(link: second, idToken: anonymous.idToken, allowMigration: true))
        #expect(login.uid == existing.uid)
        #expect(try h.store.read { try $0.account(uid: anonymous.uid) } == nil)
    }

    @Test("50 concurrent completions of one code: exactly one succeeds", arguments: StoreKind.available)
    func concurrentCompletions(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind)
        try h.service.emailLink.send(EmailLinkRequest(email: "race@example.com"))
        let link = try h.lastLink()
        let wins = Counter()
        let refusals = Counter()
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            do {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
                wins.increment()
            } catch let error as AuthError where error.code == "LINK_USED" {
                refusals.increment()
            } catch {}
        }
        #expect(wins.value == 1)
        #expect(refusals.value == 49)
        let accounts = try h.store.read { try $0.account(address: EmailAddress.parse("race@example.com")) }
        #expect(accounts != nil)
    }

    @Test("rate limits are kept in the store, keyed by hash", arguments: StoreKind.available)
    func rateLimitsPersist(kind: StoreKind) throws {
        let store = try kind.database().open()
        let bucket = Array(SHA256.hash("bucket").prefix(16))
        #expect(try store.write { try $0.rateLimit(bucket: bucket, now: 1000, interval: 60, perHour: 2) } == nil)
        #expect(try store.write { try $0.rateLimit(bucket: bucket, now: 1010, interval: 60, perHour: 2) } == 50)
        #expect(try store.write { try $0.rateLimit(bucket: bucket, now: 1060, interval: 60, perHour: 2) } == nil)
        #expect(try store.write { try $0.rateLimit(bucket: bucket, now: 1200, interval: 60, perHour: 2) } == 3400)
        #expect(try store.write { try $0.rateLimit(bucket: bucket, now: 4600, interval: 60, perHour: 2) } == nil)
    }
}
