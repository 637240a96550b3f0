/// One event on its way to one endpoint, as the store records it (a sibling of the outbox's
/// message row, with the same states, lease and due time).
public struct WebhookDelivery: Sendable, Hashable {
    public let id: Int64
    /// `webhook-id`: the event's id, the same for every attempt and every endpoint.
    public let webhookID: String
    /// The endpoint's URL.
    public let endpoint: String
    /// The stored endpoint's id (`ep_…`); nil for an endpoint of `--webhook-urls`.
    public let endpointID: String?
    /// The event type (`user.created`, …).
    public let eventType: String
    /// The request body, signed and sent as is on every attempt.
    public let body: String
    public let state: OutboxState
    /// Failed attempts so far.
    public let attempts: Int
    /// When it is due (for a claimed one: when its lease ends).
    public let nextAttemptAt: Int64
    public let createdAt: Int64
    /// When an undelivered event is abandoned.
    public let giveUpAt: Int64
    public let finishedAt: Int64?
    /// The last attempt's status line or failure (never a header or a body).
    public let lastReply: String?

    public init(
        id: Int64, webhookID: String, endpoint: String, endpointID: String? = nil, eventType: String, body: String, state: OutboxState,
        attempts: Int, nextAttemptAt: Int64, createdAt: Int64, giveUpAt: Int64, finishedAt: Int64?, lastReply: String?
    ) {
        self.id = id
        self.webhookID = webhookID
        self.endpoint = endpoint
        self.endpointID = endpointID
        self.eventType = eventType
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.giveUpAt = giveUpAt
        self.finishedAt = finishedAt
        self.lastReply = lastReply
    }
}

/// A delivery a worker claimed, and whether its endpoint has been disabled (a 410) since it was
/// queued.
public struct WebhookClaim: Sendable, Hashable {
    public let delivery: WebhookDelivery
    public let endpointDisabled: Bool

    public init(delivery: WebhookDelivery, endpointDisabled: Bool) {
        self.delivery = delivery
        self.endpointDisabled = endpointDisabled
    }
}

/// Where one delivery of an event goes: a URL, and the stored endpoint it belongs to (nil for
/// an endpoint of `--webhook-urls`).
public struct WebhookTarget: Sendable, Hashable {
    public let url: String
    public let endpointID: String?

    public init(url: String, endpointID: String? = nil) {
        self.url = url
        self.endpointID = endpointID
    }
}

/// Deliveries by state, for `/metrics`.
public struct WebhookCounts: Sendable, Hashable {
    public var byState: [OutboxState: Int] = [:]
    public init() {}
    public subscript(state: OutboxState) -> Int { byState[state] ?? 0 }
}

/// Webhook reads, part of every `StoreReader`.
public protocol WebhookReader {
    /// Deliveries in `state` (all states when nil), newest first, at most `limit`.
    func webhookDeliveries(state: OutboxState?, limit: Int) throws -> [WebhookDelivery]
    /// The endpoints a 410 disabled.
    func disabledWebhookEndpoints() throws -> [String]
    /// The endpoints a 410 disabled, each with the reason recorded.
    func disabledWebhookEndpointReasons() throws -> [String: String]
    /// The stored endpoints, oldest first.
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    /// Whether a stored endpoint not disabled admits `eventType` (what `enqueueWebhook` with
    /// `storedFilter` would queue a delivery for).
    func hasWebhookEndpoint(admitting eventType: String) throws -> Bool
    /// Deliveries by state.
    func webhookCounts() throws -> WebhookCounts
}

/// Webhook changes, part of every `StoreWriter`: an event is queued in the same transaction as
/// the change that causes it. Its claim, outcomes and purge are the lease queue's
/// (``LeasedQueueWriter`` with ``LeasedQueue/webhooks``). An account's events are its activity too:
/// the events ledger records both in one place, so the writer of one is the writer of the other.
public protocol WebhookWriter: WebhookReader, ActivityWriter {
    /// Queues one delivery of the event `webhookID` for each target not disabled and, when
    /// `storedFilter`, for each stored endpoint not disabled whose filter admits `eventType`.
    func enqueueWebhook(
        webhookID: String, eventType: String, body: String, endpoints: [WebhookTarget], now: Int64, giveUpAt: Int64,
        storedFilter: Bool) throws
    /// Disables `endpoint` (it answered 410): nothing more is queued for it or sent to it.
    func disableWebhookEndpoint(_ endpoint: String, reason: String, now: Int64) throws
    /// Stores a new endpoint and enables its URL again if a 410 had disabled it.
    /// - Throws: `StoreError` when the id is taken.
    func insertWebhookEndpoint(_ record: WebhookEndpointRecord) throws
    /// Deletes a stored endpoint; false when there was none.
    func deleteWebhookEndpoint(id: String) throws -> Bool
    /// Replaces a stored endpoint's sealed secrets (a rotation); false when there is none.
    func updateWebhookEndpointSecrets(_ record: WebhookEndpointRecord) throws -> Bool
}

extension WebhookWriter {
    /// Queues one delivery for each of `endpoints` (URLs of `--webhook-urls`) and each stored
    /// endpoint whose filter admits the event.
    public func enqueueWebhook(
        webhookID: String, eventType: String, body: String, endpoints: [String], now: Int64, giveUpAt: Int64
    ) throws {
        try enqueueWebhook(
            webhookID: webhookID, eventType: eventType, body: body, endpoints: endpoints.map { WebhookTarget(url: $0) }, now: now,
            giveUpAt: giveUpAt, storedFilter: true)
    }
}
