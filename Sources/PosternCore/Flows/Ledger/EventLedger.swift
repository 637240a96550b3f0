import PosternCrypto

/// Queues webhook events inside the transaction of the change that causes them: one delivery per
/// endpoint of `--webhook-urls` whose filter admits the event, and one per stored endpoint whose
/// filter does (the store picks those in the same statement, so an endpoint added a moment ago
/// by another process is seen).
public struct EventLedger: Sendable {
    let configuration: WebhookConfiguration

    public init(configuration: WebhookConfiguration) { self.configuration = configuration }

    /// A fresh `webhook-id`: `msg_` and 16 random bytes, base64url.
    /// - Throws: `CryptoError` when the DRBG fails.
    static func newWebhookID() throws -> String { "msg_" + Base64URL.encode(try SecureRandom.bytes(16)) }

    /// Queues `event`, which happened at `now`, under a fresh `webhook-id`. A store that runs the
    /// closure again draws a new one; only the committed run's id is ever sent.
    /// - Throws: what the store throws.
    public func record(_ event: WebhookEvent, tx: any StoreWriter, now: Int64) throws {
        try record(try prepare(event, now: now), tx: tx)
    }

    /// An event made ready to queue: its id and body drawn and encoded before the transaction, so
    /// that a caller whose records a single writer commits (the outbox workers) does that work on
    /// its own thread. Preparing an event that is then not recorded costs nothing but the work.
    public struct Prepared: Sendable {
        fileprivate let webhookID: String
        fileprivate let type: String
        fileprivate let body: String
        fileprivate let now: Int64
    }

    /// `event`, which happened at `now`, with a fresh `webhook-id` and its body.
    /// - Throws: `CryptoError` when the DRBG fails.
    public func prepare(_ event: WebhookEvent, now: Int64) throws -> Prepared {
        Prepared(webhookID: try Self.newWebhookID(), type: event.type, body: event.body(at: now), now: now)
    }

    /// Queues a prepared event, in the transaction of the change that caused it.
    /// - Throws: what the store throws.
    public func record(_ event: Prepared, tx: any StoreWriter) throws {
        let urls = configuration.filter.admits(event.type) ? configuration.endpoints : []
        try tx.enqueueWebhook(
            webhookID: event.webhookID, eventType: event.type, body: event.body,
            endpoints: urls.map { WebhookTarget(url: $0) }, now: event.now,
            giveUpAt: FlowContext.adding(configuration.policy.maximumAge, to: event.now), storedFilter: true)
    }
}
