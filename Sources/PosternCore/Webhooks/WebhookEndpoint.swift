import Foundation
import PosternCrypto

/// Which event types an endpoint is sent: every one (`*`), or a list. A filter is written as
/// comma-separated types, where `user.*` stands for every `user.` type known when the filter is
/// read (the stored form is the expanded list, so a type added later reaches only `*`).
public struct WebhookEventFilter: Sendable, Hashable, CustomStringConvertible {
    /// The event types, sorted; nil for every type, present and future.
    public let types: [String]?

    /// Every event type.
    public static let all = WebhookEventFilter(types: nil)

    private init(types: [String]?) { self.types = types }

    /// Parses `*`, or `user.created,mail.*,…`.
    /// - Throws: `SettingsError` naming an unknown type or an empty filter (never silently nothing).
    public init(parsing text: String) throws(SettingsError) {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { throw SettingsError("an event filter needs * or at least one event type") }
        if parts.contains("*") {
            types = nil
            return
        }
        var chosen: Set<String> = []
        for part in parts {
            if part.hasSuffix(".*") {
                let prefix = String(part.dropLast())
                let matching = WebhookEvent.types.filter { $0.hasPrefix(prefix) }
                guard !matching.isEmpty else { throw SettingsError("no event type matches \(part)") }
                chosen.formUnion(matching)
            } else {
                guard WebhookEvent.types.contains(part) else {
                    throw SettingsError("unknown event type \(part); known: \(WebhookEvent.types.joined(separator: ", "))")
                }
                chosen.insert(part)
            }
        }
        types = chosen.sorted()
    }

    /// Reads the stored form (`description`), unchecked: a type no longer known matches nothing.
    public init(storedForm text: String) {
        types = text == "*" ? nil : text.split(separator: ",").map(String.init)
    }

    /// The stored form: `*`, or the types comma-separated.
    public var description: String { types?.joined(separator: ",") ?? "*" }

    /// Whether `type` is sent. `webhook.test` is always sent: it checks the endpoint itself.
    public func admits(_ type: String) -> Bool {
        type == "webhook.test" || types?.contains(type) ?? true
    }
}

/// An endpoint an operator added (`postern webhooks add`, `POST /v1/admin/webhooks`), as the
/// store keeps it: its URL and filter in the clear, its signing secret sealed under the master
/// key; after a rotation the previous secret too, until `previousUntil`.
public struct WebhookEndpointRecord: Sendable, Hashable {
    /// `ep_` and 12 random characters.
    public let id: String
    public let url: String
    public let filter: WebhookEventFilter
    public var sealedSecret: [UInt8]
    public var sealedPrevious: [UInt8]?
    public var previousUntil: Int64?
    public let createdAt: Int64

    public init(
        id: String, url: String, filter: WebhookEventFilter, sealedSecret: [UInt8], sealedPrevious: [UInt8]? = nil,
        previousUntil: Int64? = nil, createdAt: Int64
    ) {
        self.id = id
        self.url = url
        self.filter = filter
        self.sealedSecret = sealedSecret
        self.sealedPrevious = sealedPrevious
        self.previousUntil = previousUntil
        self.createdAt = createdAt
    }
}

/// One endpoint as operators see it (never a secret): a stored one, or one of `--webhook-urls`.
public struct WebhookEndpointInfo: Sendable, Hashable {
    /// The stored endpoint's id; `settings-N` for the N-th of `--webhook-urls`.
    public let id: String
    public let url: String
    public let filter: WebhookEventFilter
    /// `settings` or `api` (added by the CLI or the admin API).
    public let source: String
    /// Why it is disabled (a 410 Gone), when it is.
    public let disabledReason: String?
    /// Until when a rotated-out secret still signs, when one does.
    public let previousSecretUntil: Int64?
    public let createdAt: Int64?
}

/// What an add or a rotation hands back: the endpoint, and its new secret, shown this once.
public struct WebhookEndpointSecret: Sendable {
    public let endpoint: WebhookEndpointInfo
    /// `whsec_…`: shown once, stored only sealed.
    public let secret: String
}

/// Adds, lists, removes and rotates stored webhook endpoints, sealing their secrets with the
/// master key (the key ring's box), and opens them for the worker.
public struct WebhookEndpointVault: Sendable {
    let store: any Store
    let box: SecretBox
    let clock: any WallClock
    /// The endpoints of `--webhook-urls`, listed beside the stored ones.
    let configured: WebhookConfiguration

    /// How long a rotated-out secret keeps signing: receivers have a day to take the new one.
    public static let rotationOverlap: Int64 = 86_400

    /// Every endpoint: those of the settings first, then the stored ones, oldest first.
    /// - Throws: `AuthError.unavailable`.
    public func list() throws(AuthError) -> [WebhookEndpointInfo] {
        let configured = self.configured
        return try run {
            try store.read { (tx: any WebhookReader) in
                let disabled = try tx.disabledWebhookEndpointReasons()
                let settings = configured.endpoints.enumerated().map { index, url in
                    WebhookEndpointInfo(
                        id: "settings-\(index + 1)", url: url, filter: configured.filter, source: "settings",
                        disabledReason: disabled[url], previousSecretUntil: nil, createdAt: nil)
                }
                return settings + (try tx.webhookEndpoints()).map { Self.info($0, disabled: disabled[$0.url]) }
            }
        }
    }

    /// Adds an endpoint with a fresh secret; a URL a 410 disabled is enabled again.
    /// - Throws: `AuthError.invalidArgument` for a bad URL or filter, or a URL whose host is a
    ///   literal loopback, private, link-local or multicast address `--allow-private-targets` does
    ///   not list (``TargetAddressPolicy``).
    public func add(url: String, events: String?) throws(AuthError) -> WebhookEndpointSecret {
        do { try WebhookConfiguration.checkURL(url) } catch { throw .invalidArgument("url: \(error.message)") }
        do { try configured.targets.check(url: url, setting: "url") } catch { throw .invalidArgument(error.message) }
        let filter: WebhookEventFilter
        do { filter = try events.map { (text) throws(SettingsError) in try WebhookEventFilter(parsing: text) } ?? .all } catch {
            throw .invalidArgument("events: \(error.message)")
        }
        let id = "ep_" + Base64URL.encode(try run { try SecureRandom.bytes(9) })
        let (secret, sealed) = try newSecret(id: id)
        let record = WebhookEndpointRecord(id: id, url: url, filter: filter, sealedSecret: sealed, createdAt: clock.unixSeconds())
        try run { try store.write { (tx: any WebhookWriter) in try tx.insertWebhookEndpoint(record) } }
        return WebhookEndpointSecret(endpoint: Self.info(record, disabled: nil), secret: secret)
    }

    /// Removes a stored endpoint; its undelivered events are abandoned. False when there is none.
    /// - Throws: `AuthError.invalidArgument` for an endpoint of the settings.
    public func remove(id: String) throws(AuthError) -> Bool {
        guard !id.hasPrefix("settings-") else {
            throw AuthError(.notFound, code: .notFound, message: "An endpoint of --webhook-urls is removed from the settings.")
        }
        return try run { try store.write { (tx: any WebhookWriter) in try tx.deleteWebhookEndpoint(id: id) } }
    }

    /// Gives a stored endpoint a new secret; the old one keeps signing beside it for
    /// `rotationOverlap` seconds. Nil when there is no such endpoint.
    /// - Throws: `AuthError.invalidArgument` for an endpoint of the settings.
    public func rotate(id: String) throws(AuthError) -> WebhookEndpointSecret? {
        guard !id.hasPrefix("settings-") else {
            throw AuthError(.notFound, code: .notFound, message: "An endpoint of --webhook-urls rotates through --webhook-secret-file.")
        }
        let (secret, sealed) = try newSecret(id: id)
        let until = clock.unixSeconds() + Self.rotationOverlap
        let updated = try run {
            try store.write { (tx: any WebhookWriter) -> WebhookEndpointRecord? in
                guard var record = try tx.webhookEndpoints().first(where: { $0.id == id }) else { return nil }
                record.sealedPrevious = record.sealedSecret
                record.sealedSecret = sealed
                record.previousUntil = until
                guard try tx.updateWebhookEndpointSecrets(record) else { return nil }
                return record
            }
        }
        return updated.map { WebhookEndpointSecret(endpoint: Self.info($0, disabled: nil), secret: secret) }
    }

    /// Queues a `webhook.test` event for one endpoint (a stored one, or `settings-N`), delivered
    /// like every event; returns its `webhook-id`, nil when there is no such endpoint.
    /// - Throws: `AuthError.unavailable`.
    public func test(id: String) throws(AuthError) -> String? {
        guard let endpoint = try list().first(where: { $0.id == id }) else { return nil }
        let now = clock.unixSeconds()
        let policy = configured.policy
        let webhookID = try run { try EventLedger.newWebhookID() }
        let body = WebhookEvent.webhookTest(endpointID: id).body(at: now)
        try run {
            try store.write { (tx: any WebhookWriter) in
                try tx.enqueueWebhook(
                    webhookID: webhookID, eventType: "webhook.test", body: body,
                    endpoints: [WebhookTarget(url: endpoint.url, endpointID: endpoint.source == "api" ? id : nil)],
                    now: now, giveUpAt: FlowContext.adding(policy.maximumAge, to: now), storedFilter: false)
            }
        }
        return webhookID
    }

    /// The secrets that sign a delivery to `record` at `now`: the current one, and the previous
    /// one while its overlap lasts.
    /// - Throws: `CryptoError` when a sealed secret does not open under the master key.
    public func secrets(of record: WebhookEndpointRecord, now: Int64) throws -> [WebhookSecret] {
        var sealed = [record.sealedSecret]
        if let previous = record.sealedPrevious, let until = record.previousUntil, now < until { sealed.append(previous) }
        return try sealed.map { value in
            let key = try box.open(value, context: Self.sealContext(record.id))
            return try WebhookSecret("whsec_" + Data(key).base64EncodedString())
        }
    }

    private func newSecret(id: String) throws(AuthError) -> (String, [UInt8]) {
        let key = try run { try SecureRandom.bytes(32) }
        let sealed = try run { try box.seal(key, context: Self.sealContext(id)) }
        return ("whsec_" + Data(key).base64EncodedString(), sealed)
    }

    static func sealContext(_ id: String) -> [UInt8] { Array("webhook:\(id)".utf8) }

    static func info(_ record: WebhookEndpointRecord, disabled: String?) -> WebhookEndpointInfo {
        WebhookEndpointInfo(
            id: record.id, url: record.url, filter: record.filter, source: "api", disabledReason: disabled,
            previousSecretUntil: record.previousUntil, createdAt: record.createdAt)
    }

    private func run<T>(_ body: () throws -> T) throws(AuthError) -> T {
        do { return try body() } catch let error as AuthError { throw error } catch let error as StoreError {
            throw .unavailable(error.description)
        } catch { throw .internalError("\(error)") }
    }
}
