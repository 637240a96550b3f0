import Foundation
import PosternCore
import PosternCrypto

/// Webhook endpoints an operator stored: which events reach which endpoint, a 410's disabling,
/// removal and rotation, and the vault that seals their secrets.
enum WebhookEndpointContract {
    static func record(_ id: String, url: String, filter: WebhookEventFilter = .all, at: Int64 = 100) -> WebhookEndpointRecord {
        WebhookEndpointRecord(id: id, url: url, filter: filter, sealedSecret: [1, 2, 3], createdAt: at)
    }

    static func enqueue(_ store: any Store, _ id: String, type: String, settings: [String] = []) throws {
        try store.write { tx in
            try tx.enqueueWebhook(webhookID: id, eventType: type, body: "{}", endpoints: settings, now: 100, giveUpAt: 10_000)
        }
    }

    static func targets(_ store: any Store, _ id: String) throws -> [String] {
        try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.filter { $0.webhookID == id }
            .map { "\($0.endpoint)|\($0.endpointID ?? "-")" }.sorted()
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("webhookEndpoints", "an event reaches the settings URLs and each stored endpoint whose filter admits it, exactly (no LIKE wildcard)") { store in
            try store.write { tx in
                try tx.insertWebhookEndpoint(record("ep_all", url: "https://all.example/in"))
                try tx.insertWebhookEndpoint(
                    record("ep_users", url: "https://users.example/in", filter: try WebhookEventFilter(parsing: "user.*"), at: 101))
                try tx.insertWebhookEndpoint(
                    record("ep_signed", url: "https://signed.example/in", filter: try WebhookEventFilter(parsing: "user.signed_in"), at: 102))
            }
            try enqueue(store, "m1", type: "user.signed_in", settings: ["https://settings.example/in"])
            try expectContract(try targets(store, "m1") == [
                "https://all.example/in|ep_all", "https://settings.example/in|-", "https://signed.example/in|ep_signed",
                "https://users.example/in|ep_users",
            ])
            // `_` is LIKE's one-character wildcard: a look-alike type must not match `user.signed_in`.
            try enqueue(store, "m2", type: "user.signedXin")
            try expectContract(try targets(store, "m2") == ["https://all.example/in|ep_all"])
            try enqueue(store, "m3", type: "mail.failed")
            try expectContract(try targets(store, "m3") == ["https://all.example/in|ep_all"])
            // A prefix of a listed type is not the type.
            try enqueue(store, "m4", type: "user.signed")
            try expectContract(try targets(store, "m4") == ["https://all.example/in|ep_all"])
            let claimed = try store.write {
                try $0.claimDue(.webhooks, owner: "w", now: 100, leaseUntil: 200, limit: 100, claimable: DeliveryStateMachine.claimableStates)
            }
            try expectContract(claimed.filter { $0.delivery.webhookID == "m1" }.compactMap(\.delivery.endpointID).sorted() == ["ep_all", "ep_signed", "ep_users"])
            let counts = try store.read { try $0.webhookCounts() }
            try expectContract(counts[.claimed] == 7 && counts[.queued] == 0)
        },
        StoreContractCase("webhookEndpoints", "an event prepared while no endpoint admits it queues nothing, and still reaches an endpoint stored before it is recorded, body and all") { store in
            let ledger = EventLedger(configuration: WebhookConfiguration(endpoints: []))
            let sent = WebhookEvent.mailSent(messageID: 7, kind: "sign-in", attempts: 1)
            // Nothing admits it: nothing is queued.
            let first = try ledger.prepare(sent, now: 100)
            try store.write { tx in try ledger.record(first, tx: tx) }
            try expectContract(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.isEmpty)
            try expectContract(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == false)

            // Prepared while nothing admitted it; an endpoint for `mail.sent` (and one for users only)
            // is stored before the record: the transaction draws the id and the body itself.
            let second = try ledger.prepare(sent, now: 101)
            try store.write { tx in
                try tx.insertWebhookEndpoint(record("ep_mail", url: "https://mail.example/in", filter: try WebhookEventFilter(parsing: "mail.sent")))
                try tx.insertWebhookEndpoint(
                    record("ep_users", url: "https://users.example/in", filter: try WebhookEventFilter(parsing: "user.*"), at: 101))
            }
            try expectContract(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == true)
            try expectContract(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.failed") } == false)
            try store.write { tx in try ledger.record(second, tx: tx) }
            let queued = try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }
            try expectContract(queued.map(\.endpointID) == ["ep_mail"])
            try expectContract(queued.first?.webhookID.hasPrefix("msg_") == true)
            try expectContract(queued.first?.body == sent.body(at: 101))
            // A type no stored endpoint admits still queues nothing.
            try store.write { tx in
                try ledger.record(try ledger.prepare(.mailFailed(messageID: 7, kind: "sign-in", attempts: 2, email: EmailAddress.restored(localPart: "a", domain: "example.com")), now: 102), tx: tx)
            }
            try expectContract(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.count == 1)
            // Once a record has seen a stored endpoint, events are prepared whole: the same outcome.
            try store.write { tx in try ledger.record(try ledger.prepare(sent, now: 103), tx: tx) }
            try expectContract(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.map(\.endpointID) == ["ep_mail", "ep_mail"])
            // A disabled endpoint admits nothing.
            try store.write { tx in try tx.disableWebhookEndpoint("https://mail.example/in", reason: "HTTP 410", now: 104) }
            try expectContract(try store.read { try $0.hasWebhookEndpoint(admitting: "mail.sent") } == false)
        },
        StoreContractCase("webhookEndpoints", "a ledger that draws every event (a store over the network) queues nothing while no endpoint admits it, and one delivery per admitting endpoint once one is stored, disabled ones left out") { store in
            let ledger = EventLedger(configuration: WebhookConfiguration(endpoints: []), drawsEveryEvent: true)
            let sent = WebhookEvent.mailSent(messageID: 7, kind: "sign-in", attempts: 1)
            try store.write { tx in try ledger.record(try ledger.prepare(sent, now: 100), tx: tx) }
            try expectContract(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.isEmpty)
            try store.write { tx in
                try tx.insertWebhookEndpoint(record("ep_mail", url: "https://mail.example/in", filter: try WebhookEventFilter(parsing: "mail.*")))
                try tx.insertWebhookEndpoint(record("ep_off", url: "https://off.example/in", at: 101))
                try tx.disableWebhookEndpoint("https://off.example/in", reason: "HTTP 410", now: 101)
            }
            // Recorded with the request's other writes, then read back in the same transaction.
            let seen = try store.write { tx in
                try ledger.record(try ledger.prepare(sent, now: 102), tx: tx)
                return try tx.webhookDeliveries(state: nil, limit: 100).map(\.endpointID)
            }
            try expectContract(seen == ["ep_mail"])
            try expectContract(try store.read { try $0.webhookDeliveries(state: nil, limit: 100) }.first?.body == sent.body(at: 102))
        },
        StoreContractCase("webhookEndpoints", "a 410 keeps events from a stored endpoint's URL until it is added again; remove and rotate report unknown ids") { store in
            try store.write { tx in try tx.insertWebhookEndpoint(record("ep_a", url: "https://a.example/in")) }
            try store.write { tx in try tx.disableWebhookEndpoint("https://a.example/in", reason: "HTTP 410", now: 100) }
            try expectContract(try store.read { try $0.disabledWebhookEndpointReasons() } == ["https://a.example/in": "HTTP 410"])
            try enqueue(store, "m1", type: "user.created")
            try expectContract(try targets(store, "m1").isEmpty)
            // Added again (a new id, the same URL): enabled.
            try store.write { tx in try tx.insertWebhookEndpoint(record("ep_b", url: "https://a.example/in", at: 101)) }
            try expectContract(try store.read { try $0.disabledWebhookEndpoints() }.isEmpty)
            try enqueue(store, "m2", type: "user.created")
            try expectContract(try targets(store, "m2") == ["https://a.example/in|ep_a", "https://a.example/in|ep_b"])
            // A duplicate id is refused.
            try expectContractThrows((any Error).self) { try store.write { tx in try tx.insertWebhookEndpoint(record("ep_a", url: "https://x.example/")) } }
            var changing = record("ep_a", url: "https://a.example/in")
            changing.sealedPrevious = [1, 2, 3]
            changing.sealedSecret = [4, 5, 6]
            changing.previousUntil = 500
            let rotated = changing
            try expectContract(try store.write { try $0.updateWebhookEndpointSecrets(rotated) })
            try expectContract(try store.read { try $0.webhookEndpoints() }.first { $0.id == "ep_a" } == rotated)
            let ghost = WebhookEndpointRecord(id: "ep_none", url: rotated.url, filter: .all, sealedSecret: [9], createdAt: 1)
            try expectContract(try store.write { try $0.updateWebhookEndpointSecrets(ghost) } == false)
            try expectContract(try store.write { try $0.deleteWebhookEndpoint(id: "ep_a") })
            try expectContract(try store.write { try $0.deleteWebhookEndpoint(id: "ep_a") } == false)
            try expectContract(try store.read { try $0.webhookEndpoints() }.map(\.id) == ["ep_b"])
        },
        StoreContractCase("webhookEndpoints", "the vault seals each secret under the master key, shows it once, signs with both across a rotation for a day, and refuses settings ids") { store in
            let clock = ManualClock()
            let box = try SecretBox(key: try SecureRandom.bytes(32))
            let vault = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 3600)
                .webhookEndpoints(configured: WebhookConfiguration(endpoints: ["https://settings.example/in"]))
            let added = try vault.add(url: "https://app.example/hooks", events: "user.*,mail.failed")
            try expectContract(added.secret.hasPrefix("whsec_"))
            try expectContract(added.endpoint.filter.types?.contains("user.created") == true && added.endpoint.filter.types?.contains("mail.sent") == false)
            let key = Array(try requireContract(Data(base64Encoded: String(added.secret.dropFirst(6))), "the secret's key"))
            try expectContract(key.count == 32)
            let stored = try requireContract(try store.read { try $0.webhookEndpoints() }.first)
            // The database holds it only sealed: the key's bytes appear nowhere in the row.
            let sealedBytes = stored.sealedSecret
            try expectContract(!(0...(sealedBytes.count - 8)).contains { Array(sealedBytes[$0..<$0 + 8]) == Array(key.prefix(8)) })
            let signed = try vault.secrets(of: stored, now: clock.unixSeconds())
            try expectContract(signed.map { $0.signature(id: "m", timestamp: 1, body: "{}") } == [try WebhookSecret(added.secret).signature(id: "m", timestamp: 1, body: "{}")])
            // Another master key opens nothing.
            let other = KeyVault(store: store, box: try SecretBox(key: try SecureRandom.bytes(32)), clock: clock, maxCodeLifetime: 3600)
                .webhookEndpoints(configured: WebhookConfiguration())
            try expectContractThrows((any Error).self) { try other.secrets(of: stored, now: clock.unixSeconds()) }
            // A sealed secret moved to another endpoint's row does not open (bound to its id).
            let moved = WebhookEndpointRecord(id: "ep_other", url: stored.url, filter: .all, sealedSecret: stored.sealedSecret, createdAt: 1)
            try expectContractThrows((any Error).self) { try vault.secrets(of: moved, now: clock.unixSeconds()) }

            let rotated = try requireContract(try vault.rotate(id: added.endpoint.id))
            try expectContract(rotated.secret != added.secret)
            let after = try requireContract(try store.read { try $0.webhookEndpoints() }.first)
            let both = try vault.secrets(of: after, now: clock.unixSeconds()).map { $0.signature(id: "m", timestamp: 1, body: "{}") }
            try expectContract(both == [try WebhookSecret(rotated.secret), try WebhookSecret(added.secret)].map { $0.signature(id: "m", timestamp: 1, body: "{}") })
            clock.advance(by: TimeInterval(WebhookEndpointVault.rotationOverlap))
            try expectContract(try vault.secrets(of: after, now: clock.unixSeconds()).count == 1)

            let listed = try vault.list()
            try expectContract(listed.map(\.id) == ["settings-1", added.endpoint.id])
            try expectContract(listed.map(\.source) == ["settings", "api"])
            try expectContractThrows(AuthError.self) { try vault.remove(id: "settings-1") }
            try expectContractThrows(AuthError.self) { try vault.rotate(id: "settings-1") }
            try expectContract(try vault.rotate(id: "ep_nothing") == nil)
            try expectContractThrows(AuthError.self) { try vault.add(url: "ftp://app.example/", events: nil) }
            try expectContractThrows(AuthError.self) { try vault.add(url: "https://user:pw@app.example/", events: nil) }
            try expectContractThrows(AuthError.self) { try vault.add(url: "https://app.example/", events: "user.nothing") }
            try expectContractThrows(AuthError.self) { try vault.add(url: "https://app.example/", events: " , ") }

            // A test event goes to that one endpoint, whatever its filter.
            let testID = try requireContract(try vault.test(id: added.endpoint.id))
            let deliveries = try store.read { try $0.webhookDeliveries(state: nil, limit: 10) }.filter { $0.webhookID == testID }
            try expectContract(deliveries.map(\.endpointID) == [added.endpoint.id] && deliveries.map(\.eventType) == ["webhook.test"])
            try expectContract(try vault.test(id: "ep_nothing") == nil)
            try expectContract(try vault.remove(id: added.endpoint.id))
            try expectContract(try vault.remove(id: added.endpoint.id) == false)
        },
    ]
}
