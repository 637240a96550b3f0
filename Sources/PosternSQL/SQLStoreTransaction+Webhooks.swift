import Foundation
import PosternCore

extension SQLStoreTransaction {
    private static let deliveryColumns = deliveryColumns("")

    /// The delivery columns `readDelivery` reads, each prefixed with `table` (`w.`, or nothing).
    private static func deliveryColumns(_ table: String) -> String {
        [
            "id", "webhook_id", "endpoint", "event_type", "body", "state", "attempts", "next_attempt_at", "created_at",
            "give_up_at", "finished_at", "last_reply", "endpoint_id",
        ].map { table + $0 }.joined(separator: ", ")
    }

    /// Reads the columns of `deliveryColumns` starting at column 0.
    private func readDelivery(_ row: any SQLRow) throws -> WebhookDelivery {
        guard let webhookID = row.text(1), let endpoint = row.text(2), let type = row.text(3), let body = row.text(4),
            let state = row.text(5).flatMap(OutboxState.init(rawValue:))
        else { throw StoreError.corrupt("webhook delivery row") }
        return WebhookDelivery(
            id: row.integer(0), webhookID: webhookID, endpoint: endpoint, endpointID: row.text(12), eventType: type, body: body, state: state,
            attempts: Int(row.integer(6)), nextAttemptAt: row.integer(7), createdAt: row.integer(8), giveUpAt: row.integer(9),
            finishedAt: row.optionalInteger(10), lastReply: row.text(11))
    }

    // MARK: reads

    public func webhookDeliveries(state: OutboxState?, limit: Int) throws -> [WebhookDelivery] {
        var deliveries: [WebhookDelivery] = []
        let limit = SQLValue.integer(Int64(max(0, limit)))
        if let state {
            try db.query(
                "SELECT \(Self.deliveryColumns) FROM webhook_deliveries WHERE state = ? ORDER BY id DESC LIMIT ?",
                [.text(state.rawValue), limit]
            ) { deliveries.append(try readDelivery($0)) }
        } else {
            try db.query("SELECT \(Self.deliveryColumns) FROM webhook_deliveries ORDER BY id DESC LIMIT ?", [limit]) {
                deliveries.append(try readDelivery($0))
            }
        }
        return deliveries
    }

    public func disabledWebhookEndpointReasons() throws -> [String: String] {
        var reasons: [String: String] = [:]
        try db.query("SELECT endpoint, reason FROM webhook_endpoints_disabled") { row in
            if let endpoint = row.text(0) { reasons[endpoint] = row.text(1) ?? "" }
        }
        return reasons
    }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        var records: [WebhookEndpointRecord] = []
        try db.query(
            "SELECT id, url, events, sealed_secret, sealed_previous, previous_until, created_at FROM webhook_endpoints ORDER BY created_at, id"
        ) { row in
            guard let id = row.text(0), let url = row.text(1), let events = row.text(2), let sealed = row.blob(3),
                case let filter = WebhookEventFilter(storedForm: events)
            else { throw StoreError.corrupt("webhook endpoint row") }
            records.append(
                WebhookEndpointRecord(
                    id: id, url: url, filter: filter, sealedSecret: sealed, sealedPrevious: row.blob(4),
                    previousUntil: row.optionalInteger(5), createdAt: row.integer(6)))
        }
        return records
    }

    public func webhookCounts() throws -> WebhookCounts {
        var counts = WebhookCounts()
        try db.query("SELECT state, count(*) FROM webhook_deliveries GROUP BY state") { row in
            if let state = row.text(0).flatMap(OutboxState.init(rawValue:)) { counts.byState[state] = Int(row.integer(1)) }
        }
        return counts
    }

    public func disabledWebhookEndpoints() throws -> [String] {
        var endpoints: [String] = []
        try db.query("SELECT endpoint FROM webhook_endpoints_disabled ORDER BY endpoint") { row in
            if let endpoint = row.text(0) { endpoints.append(endpoint) }
        }
        return endpoints
    }

    // MARK: changes

    public func enqueueWebhook(
        webhookID: String, eventType: String, body: String, endpoints: [WebhookTarget], now: Int64, giveUpAt: Int64,
        storedFilter: Bool
    ) throws {
        // Nothing reads these answers: they ride with the transaction's next statement or commit.
        for endpoint in endpoints {
            try db.executeDeferred(
                """
                INSERT INTO webhook_deliveries
                    (webhook_id, endpoint, endpoint_id, event_type, body, state, next_attempt_at, created_at, give_up_at)
                SELECT ?, ?, ?, ?, ?, 'queued', ?, ?, ?
                WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints_disabled WHERE endpoint = ?)
                """,
                [
                    .text(webhookID), .text(endpoint.url), endpoint.endpointID.map(SQLValue.text) ?? .null, .text(eventType),
                    .text(body), .integer(now), .integer(now), .integer(giveUpAt), .text(endpoint.url),
                ])
        }
        guard storedFilter else { return }
        // The stored filter is `*` or a comma list of exact types: matched as `,type,` inside
        // `,list,`. A substring search, not LIKE: SQLite prepares a statement again at each new
        // value bound to a LIKE pattern (it might choose another plan), which was most of the
        // writer's work per delivered message.
        try db.executeDeferred(
            """
            INSERT INTO webhook_deliveries
                (webhook_id, endpoint, endpoint_id, event_type, body, state, next_attempt_at, created_at, give_up_at)
            SELECT ?, e.url, e.id, ?, ?, 'queued', ?, ?, ?
            FROM webhook_endpoints e
            WHERE \(admittingEndpoint)
            ORDER BY e.created_at, e.id
            """,
            [.text(webhookID), .text(eventType), .text(body), .integer(now), .integer(now), .integer(giveUpAt), .text("," + eventType + ",")])
    }

    public func hasWebhookEndpoint(admitting eventType: String) throws -> Bool {
        try db.first("SELECT 1 FROM webhook_endpoints e WHERE \(admittingEndpoint) LIMIT 1", [.text("," + eventType + ",")]) { _ in true } ?? false
    }

    /// The condition on a stored endpoint `e` that admits the event type bound as `,type,`, and is
    /// not disabled: shared by the queueing and by the question whether anything would be queued.
    private var admittingEndpoint: String {
        let find = db.dialect == .sqlite ? "instr" : "strpos"
        return """
            (e.events = '*' OR \(find)(',' || e.events || ',', ?) > 0)
                AND NOT EXISTS (SELECT 1 FROM webhook_endpoints_disabled d WHERE d.endpoint = e.url)
            """
    }

    /// Claims due deliveries (``LeasedQueueWriter/claimDue(_:owner:now:leaseUntil:limit:claimable:)``
    /// of ``LeasedQueue/webhooks``), each with whether a 410 has disabled its endpoint since.
    func claimDueWebhooks(owner: String, now: Int64, leaseUntil: Int64, limit: Int, claimable: [OutboxState]) throws -> [WebhookClaim] {
        let (sql, args) = leaseClaim(
            table: .webhookDeliveries, alias: "w", owner: owner, now: now, leaseUntil: leaseUntil, limit: limit, claimable: claimable
        ) { row in
            // SQLite names the claimed row by its table: `d` has an `endpoint` column too.
            "\(Self.deliveryColumns(row)), EXISTS (SELECT 1 FROM webhook_endpoints_disabled d WHERE d.endpoint = \(row.isEmpty ? "webhook_deliveries." : row)endpoint)"
        }
        var claims: [WebhookClaim] = []
        try db.rowLocked {
            try db.query(sql, args) { row in
                claims.append(WebhookClaim(delivery: try readDelivery(row), endpointDisabled: row.integer(13) != 0))
            }
        }
        return claims.sorted { ($0.delivery.createdAt, $0.delivery.id) < ($1.delivery.createdAt, $1.delivery.id) }
    }

    public func disableWebhookEndpoint(_ endpoint: String, reason: String, now: Int64) throws {
        _ = try db.rowLocked {
            try db.execute(
                "INSERT INTO webhook_endpoints_disabled (endpoint, reason, disabled_at) VALUES (?, ?, ?) ON CONFLICT (endpoint) DO NOTHING",
                [.text(endpoint), .text(reason), .integer(now)])
        }
    }

    public func insertWebhookEndpoint(_ record: WebhookEndpointRecord) throws {
        try db.execute(
            """
            INSERT INTO webhook_endpoints (id, url, events, sealed_secret, sealed_previous, previous_until, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(record.id), .text(record.url), .text(record.filter.description), .blob(record.sealedSecret),
                record.sealedPrevious.map(SQLValue.blob) ?? .null, record.previousUntil.map(SQLValue.integer) ?? .null,
                .integer(record.createdAt),
            ])
        // An operator adding the URL again means it is back: a 410 no longer holds.
        try db.execute("DELETE FROM webhook_endpoints_disabled WHERE endpoint = ?", [.text(record.url)])
    }

    public func deleteWebhookEndpoint(id: String) throws -> Bool {
        try db.execute("DELETE FROM webhook_endpoints WHERE id = ?", [.text(id)]) == 1
    }

    public func updateWebhookEndpointSecrets(_ record: WebhookEndpointRecord) throws -> Bool {
        try db.execute(
            "UPDATE webhook_endpoints SET sealed_secret = ?, sealed_previous = ?, previous_until = ? WHERE id = ?",
            [
                .blob(record.sealedSecret), record.sealedPrevious.map(SQLValue.blob) ?? .null,
                record.previousUntil.map(SQLValue.integer) ?? .null, .text(record.id),
            ]) == 1
    }
}
