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
        let type = event.type
        let urls = configuration.filter.admits(type) ? configuration.endpoints : []
        try tx.enqueueWebhook(
            webhookID: try Self.newWebhookID(), eventType: type, body: try event.body(at: now),
            endpoints: urls.map { WebhookTarget(url: $0) }, now: now,
            giveUpAt: FlowContext.adding(configuration.policy.maximumAge, to: now), storedFilter: true)
    }
}
