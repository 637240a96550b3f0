import PosternCrypto

/// Queues webhook events inside the transaction of the change that causes them, one delivery per
/// configured endpoint; with no endpoint configured it records nothing.
struct EventLedger: Sendable {
    let configuration: WebhookConfiguration

    /// Queues `event`, which happened at `now`, under a fresh `webhook-id` (`msg_` and 16 random
    /// bytes, base64url). A store that runs the closure again draws a new one; only the committed
    /// run's id is ever sent.
    /// - Throws: what the store throws.
    func record(_ event: WebhookEvent, tx: any StoreWriter, now: Int64) throws {
        guard !configuration.endpoints.isEmpty else { return }
        let id = "msg_" + Base64URL.encode(try SecureRandom.bytes(16))
        try tx.enqueueWebhook(
            webhookID: id, eventType: event.type, body: try event.body(at: now), endpoints: configuration.endpoints, now: now,
            giveUpAt: FlowContext.adding(configuration.policy.maximumAge, to: now))
    }
}
