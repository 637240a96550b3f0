import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

@Suite("Webhook endpoints: stored, filtered, sealed and rotated, on each store")
struct WebhookEndpointStoreTests {
    func record(_ id: String, url: String, filter: WebhookEventFilter = .all, at: Int64 = 100) -> WebhookEndpointRecord {
        WebhookEndpointRecord(id: id, url: url, filter: filter, sealedSecret: [1, 2, 3], createdAt: at)
    }

    func enqueue(_ store: any Store, _ id: String, type: String, settings: [String] = []) throws {
        try store.write { tx in
            try tx.enqueueWebhook(webhookID: id, eventType: type, body: "{}", endpoints: settings, now: 100, giveUpAt: 10_000)
        }
    }

    func targets(_ store: any Store, _ id: String) throws -> [String] {
        try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.filter { $0.webhookID == id }
            .map { "\($0.endpoint)|\($0.endpointID ?? "-")" }.sorted()
    }

    @Test("an event reaches the settings URLs and each stored endpoint whose filter admits it, exactly (no LIKE wildcard)", arguments: StoreKind.available)
    func filters(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        try store.write { tx in
            try tx.insertWebhookEndpoint(record("ep_all", url: "https://all.example/in"))
            try tx.insertWebhookEndpoint(
                record("ep_users", url: "https://users.example/in", filter: try WebhookEventFilter(parsing: "user.*"), at: 101))
            try tx.insertWebhookEndpoint(
                record("ep_signed", url: "https://signed.example/in", filter: try WebhookEventFilter(parsing: "user.signed_in"), at: 102))
        }
        try enqueue(store, "m1", type: "user.signed_in", settings: ["https://settings.example/in"])
        #expect(try targets(store, "m1") == [
            "https://all.example/in|ep_all", "https://settings.example/in|-", "https://signed.example/in|ep_signed",
            "https://users.example/in|ep_users",
        ])
        // `_` is LIKE's one-character wildcard: a look-alike type must not match `user.signed_in`.
        try enqueue(store, "m2", type: "user.signedXin")
        #expect(try targets(store, "m2") == ["https://all.example/in|ep_all"])
        try enqueue(store, "m3", type: "mail.failed")
        #expect(try targets(store, "m3") == ["https://all.example/in|ep_all"])
        // A prefix of a listed type is not the type.
        try enqueue(store, "m4", type: "user.signed")
        #expect(try targets(store, "m4") == ["https://all.example/in|ep_all"])
        let claimed = try store.write {
            try $0.claimDue(.webhooks, owner: "w", now: 100, leaseUntil: 200, limit: 100, claimable: DeliveryStateMachine.claimableStates)
        }
        #expect(claimed.filter { $0.delivery.webhookID == "m1" }.compactMap(\.delivery.endpointID).sorted() == ["ep_all", "ep_signed", "ep_users"])
        let counts = try store.read { try $0.webhookCounts() }
        #expect(counts[.claimed] == 7 && counts[.queued] == 0)
    }

    @Test("an event prepared while no endpoint admits it queues nothing, and still reaches an endpoint stored before it is recorded, body and all", arguments: StoreKind.available)
    func preparedWithoutEndpoints(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        let ledger = EventLedger(configuration: WebhookConfiguration(endpoints: []))
        let sent = WebhookEvent.mailSent(messageID: 7, kind: "sign-in", attempts: 1)
        // Nothing admits it: nothing is queued.
        let first = try ledger.prepare(sent, now: 100)
        try store.write { tx in try ledger.record(first, tx: tx) }
        #expect(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.isEmpty)
        #expect(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == false)

        // Prepared while nothing admitted it; an endpoint for `mail.sent` (and one for users only)
        // is stored before the record: the transaction draws the id and the body itself.
        let second = try ledger.prepare(sent, now: 101)
        try store.write { tx in
            try tx.insertWebhookEndpoint(record("ep_mail", url: "https://mail.example/in", filter: try WebhookEventFilter(parsing: "mail.sent")))
            try tx.insertWebhookEndpoint(
                record("ep_users", url: "https://users.example/in", filter: try WebhookEventFilter(parsing: "user.*"), at: 101))
        }
        #expect(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == true)
        #expect(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.failed") } == false)
        try store.write { tx in try ledger.record(second, tx: tx) }
        let queued = try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }
        #expect(queued.map(\.endpointID) == ["ep_mail"])
        #expect(queued.first?.webhookID.hasPrefix("msg_") == true)
        #expect(queued.first?.body == sent.body(at: 101))
        // A type no stored endpoint admits still queues nothing.
        try store.write { tx in
            try ledger.record(try ledger.prepare(.mailFailed(messageID: 7, kind: "sign-in", attempts: 2, email: EmailAddress.restored(localPart: "a", domain: "example.com")), now: 102), tx: tx)
        }
        #expect(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.count == 1)
        // Once a record has seen a stored endpoint, events are prepared whole: the same outcome.
        try store.write { tx in try ledger.record(try ledger.prepare(sent, now: 103), tx: tx) }
        #expect(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.map(\.endpointID) == ["ep_mail", "ep_mail"])
        // A disabled endpoint admits nothing.
        try store.write { tx in try tx.disableWebhookEndpoint("https://mail.example/in", reason: "HTTP 410", now: 104) }
        #expect(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == false)
    }

    @Test("a 410 keeps events from a stored endpoint's URL until it is added again; remove and rotate report unknown ids", arguments: StoreKind.available)
    func disabledRemovedRotated(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        try store.write { tx in try tx.insertWebhookEndpoint(record("ep_a", url: "https://a.example/in")) }
        try store.write { tx in try tx.disableWebhookEndpoint("https://a.example/in", reason: "HTTP 410", now: 100) }
        #expect(try store.read { try $0.disabledWebhookEndpointReasons() } == ["https://a.example/in": "HTTP 410"])
        try enqueue(store, "m1", type: "user.created")
        #expect(try targets(store, "m1").isEmpty)
        // Added again (a new id, the same URL): enabled.
        try store.write { tx in try tx.insertWebhookEndpoint(record("ep_b", url: "https://a.example/in", at: 101)) }
        #expect(try store.read { try $0.disabledWebhookEndpoints() }.isEmpty)
        try enqueue(store, "m2", type: "user.created")
        #expect(try targets(store, "m2") == ["https://a.example/in|ep_a", "https://a.example/in|ep_b"])
        // A duplicate id is refused.
        #expect(throws: (any Error).self) { try store.write { tx in try tx.insertWebhookEndpoint(record("ep_a", url: "https://x.example/")) } }
        var changing = record("ep_a", url: "https://a.example/in")
        changing.sealedPrevious = [1, 2, 3]
        changing.sealedSecret = [4, 5, 6]
        changing.previousUntil = 500
        let rotated = changing
        #expect(try store.write { try $0.updateWebhookEndpointSecrets(rotated) })
        #expect(try store.read { try $0.webhookEndpoints() }.first { $0.id == "ep_a" } == rotated)
        let ghost = WebhookEndpointRecord(id: "ep_none", url: rotated.url, filter: .all, sealedSecret: [9], createdAt: 1)
        #expect(try store.write { try $0.updateWebhookEndpointSecrets(ghost) } == false)
        #expect(try store.write { try $0.deleteWebhookEndpoint(id: "ep_a") })
        #expect(try store.write { try $0.deleteWebhookEndpoint(id: "ep_a") } == false)
        #expect(try store.read { try $0.webhookEndpoints() }.map(\.id) == ["ep_b"])
    }

    @Test("the vault seals each secret under the master key, shows it once, signs with both across a rotation for a day, and refuses settings ids", arguments: StoreKind.available)
    func vault(kind: StoreKind) throws {
        let store = try OutboxFixture(kind).store
        let clock = ManualClock()
        let box = try SecretBox(key: try SecureRandom.bytes(32))
        let vault = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 3600)
            .webhookEndpoints(configured: WebhookConfiguration(endpoints: ["https://settings.example/in"]))
        let added = try vault.add(url: "https://app.example/hooks", events: "user.*,mail.failed")
        #expect(added.secret.hasPrefix("whsec_"))
        #expect(added.endpoint.filter.types?.contains("user.created") == true && added.endpoint.filter.types?.contains("mail.sent") == false)
        let key = Array(Data(base64Encoded: String(added.secret.dropFirst(6)))!)
        #expect(key.count == 32)
        let stored = try #require(try store.read { try $0.webhookEndpoints() }.first)
        // The database holds it only sealed: the key's bytes appear nowhere in the row.
        let sealedBytes = stored.sealedSecret
        #expect(!(0...(sealedBytes.count - 8)).contains { Array(sealedBytes[$0..<$0 + 8]) == Array(key.prefix(8)) })
        let signed = try vault.secrets(of: stored, now: clock.unixSeconds())
        #expect(signed.map { $0.signature(id: "m", timestamp: 1, body: "{}") } == [try WebhookSecret(added.secret).signature(id: "m", timestamp: 1, body: "{}")])
        // Another master key opens nothing.
        let other = KeyVault(store: store, box: try SecretBox(key: try SecureRandom.bytes(32)), clock: clock, maxCodeLifetime: 3600)
            .webhookEndpoints(configured: WebhookConfiguration())
        #expect(throws: (any Error).self) { try other.secrets(of: stored, now: clock.unixSeconds()) }
        // A sealed secret moved to another endpoint's row does not open (bound to its id).
        let moved = WebhookEndpointRecord(id: "ep_other", url: stored.url, filter: .all, sealedSecret: stored.sealedSecret, createdAt: 1)
        #expect(throws: (any Error).self) { try vault.secrets(of: moved, now: clock.unixSeconds()) }

        let rotated = try #require(try vault.rotate(id: added.endpoint.id))
        #expect(rotated.secret != added.secret)
        let after = try #require(try store.read { try $0.webhookEndpoints() }.first)
        let both = try vault.secrets(of: after, now: clock.unixSeconds()).map { $0.signature(id: "m", timestamp: 1, body: "{}") }
        #expect(both == [try WebhookSecret(rotated.secret), try WebhookSecret(added.secret)].map { $0.signature(id: "m", timestamp: 1, body: "{}") })
        clock.advance(by: TimeInterval(WebhookEndpointVault.rotationOverlap))
        #expect(try vault.secrets(of: after, now: clock.unixSeconds()).count == 1)

        let listed = try vault.list()
        #expect(listed.map(\.id) == ["settings-1", added.endpoint.id])
        #expect(listed.map(\.source) == ["settings", "api"])
        #expect(throws: AuthError.self) { try vault.remove(id: "settings-1") }
        #expect(throws: AuthError.self) { try vault.rotate(id: "settings-1") }
        #expect(try vault.rotate(id: "ep_nothing") == nil)
        #expect(throws: AuthError.self) { try vault.add(url: "ftp://app.example/", events: nil) }
        #expect(throws: AuthError.self) { try vault.add(url: "https://user:pw@app.example/", events: nil) }
        #expect(throws: AuthError.self) { try vault.add(url: "https://app.example/", events: "user.nothing") }
        #expect(throws: AuthError.self) { try vault.add(url: "https://app.example/", events: " , ") }

        // A test event goes to that one endpoint, whatever its filter.
        let testID = try #require(try vault.test(id: added.endpoint.id))
        let deliveries = try store.read { try $0.webhookDeliveries(state: nil, limit: 10) }.filter { $0.webhookID == testID }
        #expect(deliveries.map(\.endpointID) == [added.endpoint.id] && deliveries.map(\.eventType) == ["webhook.test"])
        #expect(try vault.test(id: "ep_nothing") == nil)
        #expect(try vault.remove(id: added.endpoint.id))
        #expect(try vault.remove(id: added.endpoint.id) == false)
    }
}
