import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing

/// A store whose commits fail on demand: the closure runs, then the transaction is thrown away,
/// as when the disk is full at commit.
final class FailingCommitStore: Store {
    let inner = InMemoryStore()
    let failing = Mutex(false)
    var mailDoorbell: MailDoorbell { inner.mailDoorbell }

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T { try inner.read(body) }

    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        let fail = failing.withLock { $0 }
        return try inner.write { tx in
            let result = try body(tx)
            if fail { throw StoreError.unavailable("the commit failed") }
            return result
        }
    }
}


@Suite("Webhook events in the flows' transactions")
struct FlowWebhookTests {
    static let endpoints = ["https://hooks.example.com/a", "https://hooks.example.com/b"]

    static func harness() throws -> FlowHarness {
        try FlowHarness { $0.webhooks = WebhookConfiguration(endpoints: endpoints) }
    }

    /// The event types queued so far, oldest first, one per event (not per endpoint).
    static func types(_ store: InMemoryStore) -> [String] {
        store.snapshot().webhooks.filter { $0.endpoint == endpoints[0] }.map(\.eventType)
    }

    @Test("a scripted run queues every event type, each beside the change that caused it, for every endpoint")
    func everyEvent() throws {
        let h = try Self.harness()
        // An anonymous account: created and signed in; then upgraded by a sign-up on that device.
        let anonymous = try h.service.sessions.signInAnonymously()
        #expect(Self.types(h.store) == ["user.created", "user.signed_in"])
        let upgraded = try h.signUp("a@example.com", password: "correct horse", idToken: anonymous.idToken)
        #expect(upgraded.uid == anonymous.uid)
        #expect(Self.types(h.store).suffix(2) == ["user.anonymous_upgraded", "user.signed_in"])
        // A new address by link: created.
        let other = try h.signIn("b@example.com")
        #expect(Self.types(h.store).suffix(2) == ["user.created", "user.signed_in"])
        // A password change and a reset.
        let password = try h.service.passwords.signIn(email: "a@example.com", password: "correct horse", idToken: nil, allowMigration: nil)
        _ = try h.service.passwords.setPassword(idToken: password.session.idToken, password: "another horse")
        #expect(Self.types(h.store).suffix(3) == ["user.signed_in", "user.password_changed", "session.revoked"])
        try h.service.passwords.requestReset(email: "a@example.com", continueURL: nil, locale: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "a third horse")
        #expect(Self.types(h.store).suffix(2) == ["user.password_reset", "session.revoked"])
        // A verification: only an unverified address is verified (an operator unverified it). The
        // password it held unverified is dropped, and every session ends, before it is verified.
        _ = try h.service.operators.updateUser(uid: anonymous.uid, disabled: nil, emailVerified: false, displayName: nil)
        let unverified = try h.service.passwords.signIn(email: "a@example.com", password: "a third horse", idToken: nil, allowMigration: nil)
        try h.service.addresses.requestVerification(idToken: unverified.session.idToken, continueURL: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        #expect(Self.types(h.store).suffix(3) == ["user.signed_in", "session.revoked", "user.email_verified"])
        #expect(h.store.snapshot().webhooks.last { $0.eventType == "session.revoked" }?.body.contains(#""reason":"addressProved""#) == true)
        let again = try h.signIn("a@example.com")
        // The profile: the fields that changed are named, never their values; no change, no event.
        _ = try h.service.profiles.update(idToken: again.session.idToken, displayName: .some("Ann Lovelace"), attributes: #"{"plan":"gold"}"#)
        #expect(Self.types(h.store).last == "user.profile_updated")
        let profile = try #require(h.store.snapshot().webhooks.last { $0.eventType == "user.profile_updated" })
        #expect(profile.body.contains(#""fields":["displayName","attributes"]"#) && !profile.body.contains("Lovelace") && !profile.body.contains("gold"))
        let counted = Self.types(h.store).count
        _ = try h.service.profiles.update(idToken: again.session.idToken, displayName: .some("Ann Lovelace"), attributes: nil)
        #expect(Self.types(h.store).count == counted)
        // Signing out revokes one session; signing out again with the same token is no event.
        try h.service.sessions.signOut(refreshToken: again.session.refreshToken)
        try h.service.sessions.signOut(refreshToken: again.session.refreshToken)
        #expect(Self.types(h.store).suffix(2) == ["user.profile_updated", "session.revoked"])
        #expect(h.store.snapshot().webhooks.last?.body.contains(#""reason":"signOut""#) == true)
        // An address change; its recovery link (to the old address) is applied later.
        try h.service.addresses.requestChange(idToken: other.session.idToken, newEmail: "c@example.com", continueURL: nil)
        _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        // It ends every session of the account, as a recovery does.
        #expect(Self.types(h.store).suffix(2) == ["user.email_changed", "session.revoked"])
        #expect(h.store.snapshot().webhooks.last?.body.contains(#""reason":"emailChanged""#) == true)
        let recovery = try h.lastLink()
        // An anonymous session signing in to an existing account: migrated.
        let second = try h.service.sessions.signInAnonymously()
        let migrated = try h.signIn("c@example.com", idToken: second.idToken, allowMigration: true)
        #expect(Self.types(h.store).suffix(2) == ["user.migrated", "user.signed_in"])
        // A refresh token presented again after the grace: reuse detected.
        let fresh = try h.service.sessions.refresh(migrated.session.refreshToken)
        h.clock.advance(by: 60)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(migrated.session.refreshToken) }
        #expect(Self.types(h.store).last == "session.refresh_reuse_detected")
        _ = fresh
        // The recovery link puts b@example.com back and ends the sessions.
        _ = try h.service.addresses.apply(link: recovery, oobCode: nil, newPassword: nil)
        #expect(Self.types(h.store).suffix(2) == ["user.email_recovered", "session.revoked"])
        let recovered = try #require(h.store.snapshot().webhooks.last { $0.eventType == "user.email_recovered" })
        #expect(recovered.body.contains(#""email":"b@example.com""#))
        // Disabled by an operator: once (disabling a disabled account is no event).
        _ = try h.service.operators.updateUser(uid: anonymous.uid, disabled: true, emailVerified: nil, displayName: nil)
        _ = try h.service.operators.updateUser(uid: anonymous.uid, disabled: true, emailVerified: nil, displayName: nil)
        #expect(Self.types(h.store).suffix(2) == ["user.disabled", "session.revoked"])
        #expect(Self.types(h.store).filter { $0 == "user.disabled" }.count == 1)
        // A phone number verified by both parties, then deleted by its owner.
        let phoneOwner = try h.signIn("p@example.com")
        let claim = try h.service.phoneOwner.add(idToken: phoneOwner.session.idToken, phoneNumber: "+4915112345678", locale: nil, clientIP: nil)
        _ = try h.service.phoneOwner.prove(idToken: phoneOwner.session.idToken, claimID: claim.claimID, code: try h.lastSMSCode())
        #expect(Self.types(h.store).last == "phone.verified")
        try h.service.phoneOwner.delete(idToken: phoneOwner.session.idToken, claimID: claim.claimID)
        #expect(Self.types(h.store).last == "phone.removed")
        // Deleted by an operator.
        try h.service.operators.deleteUser(uid: other.uid)
        #expect(Self.types(h.store).last == "user.deleted")

        // Every type but the outbox's (`mail.*`: WebhookWorkerTests), the operator's test and the
        // identity providers' (`user.provider_*`: FlowProviderSignInTests, with a provider to sign in with).
        #expect(Set(Self.types(h.store)) == Set(WebhookEvent.types.filter {
            !$0.hasPrefix("mail.") && $0 != "webhook.test" && !$0.hasPrefix("user.provider_")
        }))
        let rows = h.store.snapshot().webhooks
        #expect(rows.count == 2 * Self.types(h.store).count)
        for endpoint in Self.endpoints { #expect(rows.filter { $0.endpoint == endpoint }.count == Self.types(h.store).count) }
        // One webhook-id per event, shared by its endpoints; none repeated across events.
        let byID = Dictionary(grouping: rows, by: \.webhookID)
        #expect(byID.count == Self.types(h.store).count)
        #expect(byID.values.allSatisfy { Set($0.map(\.endpoint)) == Set(Self.endpoints) && $0.first?.webhookID.hasPrefix("msg_") == true })

        // The payloads are thin: the migration names both uids; no password, token or code.
        let migration = try #require(rows.first { $0.eventType == "user.migrated" })
        #expect(migration.body.contains(#""fromUid":"\#(second.uid)""#))
        #expect(migration.body.contains(#""toUid":"\#(other.uid)""#))
        for row in rows {
            #expect(!row.body.contains("horse"))
            #expect(!row.body.contains(migrated.session.refreshToken))
            #expect(!row.body.contains("oobCode"))
        }
    }

    @Test("a transaction that fails keeps neither the change nor its event")
    func failedTransaction() throws {
        let store = FailingCommitStore()
        let clock = ManualClock()
        let vault = KeyVault(
            store: store, box: try SecretBox(key: Array(repeating: 7, count: 32)), clock: clock, maxCodeLifetime: 7 * 86_400)
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: [])
        config.webhooks = WebhookConfiguration(endpoints: Self.endpoints)
        let service = try AuthService(
            store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config, hasher: .fastForTests)
        let kept = try service.sessions.signInAnonymously()
        #expect(store.inner.snapshot().webhooks.count == 4)

        store.failing.withLock { $0 = true }
        expectAuthError("UNAVAILABLE") { _ = try service.sessions.signInAnonymously() }
        expectAuthError("UNAVAILABLE") { try service.operators.deleteUser(uid: kept.uid) }
        let state = store.inner.snapshot()
        #expect(state.accounts.count == 1)
        #expect(state.webhooks.count == 4)

        store.failing.withLock { $0 = false }
        try service.operators.deleteUser(uid: kept.uid)
        #expect(store.inner.snapshot().accounts.isEmpty)
        #expect(store.inner.snapshot().webhooks.map(\.eventType).suffix(2) == ["user.deleted", "user.deleted"])
    }

    @Test("a refused sign-in queues no event; with no endpoint configured nothing is queued at all")
    func noEvents() throws {
        let h = try Self.harness()
        let existing = try h.signIn("a@example.com")
        let before = h.store.snapshot().webhooks.count
        let anonymous = try h.service.sessions.signInAnonymously()
        let afterAnonymous = h.store.snapshot().webhooks.count
        #expect(afterAnonymous == before + 4)
        expectAuthError("MIGRATION_REQUIRED") { _ = try h.signIn("a@example.com", idToken: anonymous.idToken, allowMigration: nil) }
        expectAuthError("INVALID_LOGIN_CREDENTIALS") {
            _ = try h.service.passwords.signIn(email: "a@example.com", password: "wrong", idToken: nil, allowMigration: nil)
        }
        #expect(h.store.snapshot().webhooks.count == afterAnonymous)
        _ = existing

        let quiet = try FlowHarness()
        _ = try quiet.signIn("a@example.com")
        _ = try quiet.service.sessions.signInAnonymously()
        #expect(quiet.store.snapshot().webhooks.isEmpty)
    }
}
