import PosternCore

extension InMemoryStore {
    /// A webhook delivery as the in-memory store keeps it.
    public struct QueuedWebhook: Sendable {
        public var webhookID: String
        public var endpoint: String
        public var endpointID: String?
        public var eventType: String
        public var body: String
        public var state: OutboxState = .queued
        public var attempts = 0
        public var nextAttemptAt: Int64
        public var leaseOwner: String?
        public var createdAt: Int64
        public var giveUpAt: Int64
        public var finishedAt: Int64?
        public var lastReply: String?
        public var purged = false
    }
}

extension InMemoryStore.Transaction {
    private func delivery(_ index: Int) -> WebhookDelivery {
        let row = state.webhooks[index]
        return WebhookDelivery(
            id: Int64(index + 1), webhookID: row.webhookID, endpoint: row.endpoint, endpointID: row.endpointID, eventType: row.eventType, body: row.body,
            state: row.state, attempts: row.attempts, nextAttemptAt: row.nextAttemptAt, createdAt: row.createdAt,
            giveUpAt: row.giveUpAt, finishedAt: row.finishedAt, lastReply: row.lastReply)
    }

    public func webhookDeliveries(state wanted: OutboxState?, limit: Int) throws -> [WebhookDelivery] {
        state.webhooks.indices.reversed()
            .filter { !state.webhooks[$0].purged && (wanted == nil || state.webhooks[$0].state == wanted) }
            .prefix(max(0, limit))
            .map(delivery)
    }

    public func disabledWebhookEndpoints() throws -> [String] { state.disabledEndpoints.keys.sorted() }

    public func disabledWebhookEndpointReasons() throws -> [String: String] { state.disabledEndpoints }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        state.webhookEndpoints.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func webhookCounts() throws -> WebhookCounts {
        var counts = WebhookCounts()
        for row in state.webhooks where !row.purged { counts.byState[row.state, default: 0] += 1 }
        return counts
    }

    public func enqueueWebhook(
        webhookID: String, eventType: String, body: String, endpoints: [WebhookTarget], now: Int64, giveUpAt: Int64,
        storedFilter: Bool
    ) throws {
        var targets = endpoints
        if storedFilter {
            targets += try webhookEndpoints().filter { $0.filter.types?.contains(eventType) ?? true }
                .map { WebhookTarget(url: $0.url, endpointID: $0.id) }
        }
        for target in targets where state.disabledEndpoints[target.url] == nil {
            state.webhooks.append(
                .init(
                    webhookID: webhookID, endpoint: target.url, endpointID: target.endpointID, eventType: eventType, body: body,
                    nextAttemptAt: now, createdAt: now, giveUpAt: giveUpAt))
        }
    }

    public func hasWebhookEndpoint(admitting eventType: String) throws -> Bool {
        try webhookEndpoints().contains { ($0.filter.types?.contains(eventType) ?? true) && state.disabledEndpoints[$0.url] == nil }
    }

    public func insertWebhookEndpoint(_ record: WebhookEndpointRecord) throws {
        guard !state.webhookEndpoints.contains(where: { $0.id == record.id }) else { throw StoreError.duplicate("webhook endpoint id") }
        state.webhookEndpoints.append(record)
        state.disabledEndpoints[record.url] = nil
    }

    public func deleteWebhookEndpoint(id: String) throws -> Bool {
        guard let index = state.webhookEndpoints.firstIndex(where: { $0.id == id }) else { return false }
        state.webhookEndpoints.remove(at: index)
        return true
    }

    public func updateWebhookEndpointSecrets(_ record: WebhookEndpointRecord) throws -> Bool {
        guard let index = state.webhookEndpoints.firstIndex(where: { $0.id == record.id }) else { return false }
        state.webhookEndpoints[index].sealedSecret = record.sealedSecret
        state.webhookEndpoints[index].sealedPrevious = record.sealedPrevious
        state.webhookEndpoints[index].previousUntil = record.previousUntil
        return true
    }

    /// Claims due deliveries (the lease queue's claim of ``LeasedQueue/webhooks``), each with
    /// whether a 410 has disabled its endpoint since.
    func claimDueWebhooks(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) -> [WebhookClaim] {
        InMemoryLeaseQueue.claim(&state.webhooks, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable)
            .map { WebhookClaim(delivery: delivery($0), endpointDisabled: state.disabledEndpoints[state.webhooks[$0].endpoint] != nil) }
    }

    public func disableWebhookEndpoint(_ endpoint: String, reason: String, now: Int64) throws {
        if state.disabledEndpoints[endpoint] == nil { state.disabledEndpoints[endpoint] = reason }
    }
}
