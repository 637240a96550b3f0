import Foundation
import PosternAPI
import PosternCore

extension APIRouter {
    /// Health, readiness, metrics and the public keys.
    static func operationsRoutes(_ runtime: ServerContext, metrics: HTTPMetrics) -> [Route] {
        let service = runtime.service
        return [
            Route(method: "GET", path: "/healthz", summary: "Liveness", access: .operations, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object([.required("status", .oneOf(["ok"]))])))) { _ throws(AuthError) in
                .json(200, #"{"status":"ok"}"#)
            },
            Route(method: "GET", path: "/readyz", summary: "Readiness: the store answers", access: .operations, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: .object([.required("status", .oneOf(["ready"]))])),
                                  errors: [.unavailable])) { _ throws(AuthError) in
                do {
                    _ = try service.operators.outboxCounts()
                    return .json(200, #"{"status":"ready"}"#)
                } catch {
                    return JSONAnswer.error(.unavailable("The store does not answer."))
                }
            },
            Route(method: "GET", path: "/.well-known/jwks.json", summary: "Public keys of ID tokens", access: .operations, status: 200,
                  contract: .init(answer: .content(mediaType: "application/json", schema: Self.jwksSchema))) { _ throws(AuthError) in
                let jwks = runtime.keys.current.jwks.mapValues { keys in JSONValue.array(keys.map(JSONValue.object(strings:))) }
                var response = HTTPResponse.json(200, JSONValue.object(jwks).sortedJSONText)
                response.headers.append(("Access-Control-Allow-Origin", "*"))
                return response
            },
            // On the main listener only with the admin token: the counters tell known addresses
            // from unknown ones. The metrics listener (`serveMetrics`) serves it without one.
            Route(method: "GET", path: "/metrics", summary: "Prometheus metrics (admin token; also on --metrics-listen)", access: .admin, status: 200,
                  contract: .init(answer: .content(mediaType: "text/plain", schema: .string("The Prometheus text format 0.0.4.")))) { _ throws(AuthError) in
                metricsAnswer(service: service, metrics: metrics, housekeeping: runtime.housekeeping, reclaims: runtime.reclaims, webhooks: runtime.webhooks)
            },
        ]
    }
}

extension APIRouter {
    /// A JSON Web Key Set (RFC 7517): the ES256 public keys, then the RS256 ones.
    static let jwksSchema: JSONSchema = {
        var key = JSONSchema.object("An ES256 key (EC P-256: crv, x, y) or an RS256 key (RSA: n, e).", [
            .required("kty", .oneOf(["EC", "RSA"])),
            .required("kid", .string()),
            .required("alg", .oneOf(["ES256", "RS256"])),
            .required("use", .oneOf(["sig"])),
            .optional("crv", .oneOf(["P-256"])),
            .optional("x", .string("base64url")),
            .optional("y", .string("base64url")),
            .optional("n", .string("The modulus, base64url (2048 bits).")),
            .optional("e", .string("The public exponent, base64url.")),
        ])
        key.anyOf = [
            .object([
                .required("kty", .oneOf(["EC"])), .required("alg", .oneOf(["ES256"])), .required("crv", .oneOf(["P-256"])),
                .required("x", .string()), .required("y", .string()),
            ]),
            .object([
                .required("kty", .oneOf(["RSA"])), .required("alg", .oneOf(["RS256"])), .required("n", .string()), .required("e", .string()),
            ]),
        ]
        return .object("The public keys that verify ID tokens and the OpenID Connect provider's access tokens (RFC 7517).", [
            .required("keys", .array(key))
        ])
    }()

    /// The Prometheus text: HTTP counters, outbox states, action-code events, housekeeping and
    /// the claims taken back from dead daemons.
    static func metricsAnswer(
        service: AuthService, metrics: HTTPMetrics, housekeeping: HousekeepingMetrics, reclaims: ReclaimMetrics = ReclaimMetrics(),
        webhooks: WebhookMetrics = WebhookMetrics()
    ) -> HTTPResponse {
        var text = metrics.render()
        if let roundTrips = service.operators.storeRoundTrips {
            text += "# HELP postern_store_round_trips_total Waits for the database server's answer (PostgreSQL): a statement, or several pipelined.\n"
            text += "# TYPE postern_store_round_trips_total counter\npostern_store_round_trips_total \(roundTrips)\n"
        }
        if let batches = service.operators.storeWriteBatches {
            text += "# HELP postern_store_write_batches_total Transactions that committed several queued writes together (PostgreSQL).\n"
            text += "# TYPE postern_store_write_batches_total counter\npostern_store_write_batches_total \(batches.committed)\n"
            text += "# HELP postern_store_batched_writes_total Queued writes those transactions held.\n"
            text += "# TYPE postern_store_batched_writes_total counter\npostern_store_batched_writes_total \(batches.writes)\n"
            text += "# HELP postern_store_batch_fallbacks_total Batches the server failed as a whole (a conflict, an error): their writes ran one by one.\n"
            text += "# TYPE postern_store_batch_fallbacks_total counter\npostern_store_batch_fallbacks_total \(batches.fellBack)\n"
        }
        text += "# HELP postern_outbox_messages Outbox messages by state.\n# TYPE postern_outbox_messages gauge\n"
        let counts = (try? service.operators.outboxCounts()) ?? OutboxCounts()
        for state in OutboxState.allCases {
            text += #"postern_outbox_messages{state="\#(state.rawValue)"} \#(counts[state])"# + "\n"
        }
        text += "# HELP postern_codes_total Action codes minted, consumed and refused.\n# TYPE postern_codes_total counter\n"
        for entry in service.metrics.snapshot() {
            let label = entry.event == "refused" ? "reason" : "action"
            text += #"postern_codes_total{event="\#(entry.event)",\#(label)="\#(entry.label)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_link_failures_total Email action links refused, by the reason the answer gave (used, expired, superseded, other_browser; invalid for every other).\n"
        text += "# TYPE postern_link_failures_total counter\n"
        for entry in service.metrics.linkFailures() {
            text += #"postern_link_failures_total{reason="\#(entry.reason)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_housekeeping_rows_removed_total Expired rows housekeeping deleted, by table.\n"
        text += "# TYPE postern_housekeeping_rows_removed_total counter\n"
        for entry in housekeeping.snapshot() {
            text += #"postern_housekeeping_rows_removed_total{table="\#(entry.rows.rawValue)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_bounces_total Delivery and abuse reports taken in over the admin API, by outcome.\n"
        text += "# TYPE postern_bounces_total counter\n"
        for entry in service.bounces.metrics.snapshot() {
            text += #"postern_bounces_total{outcome="\#(entry.outcome.rawValue)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_delivery_events_total Providers' delivery events (SES over SNS, Postmark, Standard Webhooks): recipients suppressed and ignored, requests refused.\n"
        text += "# TYPE postern_delivery_events_total counter\n"
        for entry in service.deliveryEvents.metrics.snapshot() {
            text += #"postern_delivery_events_total{provider="\#(entry.provider.rawValue)",outcome="\#(entry.outcome.rawValue)"} \#(entry.count)"# + "\n"
        }
        let reclaimed = reclaims.snapshot()
        text += "# HELP postern_reclaimed_claims_total Claims of daemons whose heartbeat stopped, taken back before their lease ended, by table.\n"
        text += "# TYPE postern_reclaimed_claims_total counter\n"
        text += #"postern_reclaimed_claims_total{table="outbox"} \#(reclaimed.messages)"# + "\n"
        text += #"postern_reclaimed_claims_total{table="webhook_deliveries"} \#(reclaimed.webhooks)"# + "\n"
        text += #"postern_reclaimed_claims_total{table="sms_outbox"} \#(reclaimed.sms)"# + "\n"
        text += "# HELP postern_webhook_deliveries Webhook deliveries (one per event and endpoint) by state.\n"
        text += "# TYPE postern_webhook_deliveries gauge\n"
        let deliveries = (try? service.operators.webhookCounts()) ?? WebhookCounts()
        for state in OutboxState.allCases {
            text += #"postern_webhook_deliveries{state="\#(state.rawValue)"} \#(deliveries[state])"# + "\n"
        }
        text += "# HELP postern_webhook_attempts_total Webhook attempts by outcome: delivered (2xx), failed (retried), abandoned, disabled (410).\n"
        text += "# TYPE postern_webhook_attempts_total counter\n"
        for entry in webhooks.snapshot() {
            text += #"postern_webhook_attempts_total{outcome="\#(entry.outcome.rawValue)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_hook_calls_total Calls of the hooks that decide (--hook-*), by hook and outcome: allow, deny, claims, failure (a timeout, no connection, not 2xx, an answer of the wrong shape).\n"
        text += "# TYPE postern_hook_calls_total counter\n"
        for entry in service.hooks.metrics.snapshot() {
            text += #"postern_hook_calls_total{hook="\#(entry.hook.rawValue)",outcome="\#(entry.outcome.rawValue)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_sms_total SMS queued, sent and dead, by country calling code (never a number).\n"
        text += "# TYPE postern_sms_total counter\n"
        for entry in service.smsMetrics.snapshot() {
            text += #"postern_sms_total{event="\#(entry.event)",country="\#(entry.country)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_sms_caps_hit_total SMS refused by each toll-fraud cap (country allowlist, signed-out, number, IP, country budget, global daily cap).\n"
        text += "# TYPE postern_sms_caps_hit_total counter\n"
        for entry in service.smsMetrics.capSnapshot() {
            text += #"postern_sms_caps_hit_total{cap="\#(entry.cap)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_mail_caps_hit_total Public mail refused (429, nothing queued) by the cap per recipient domain or the cap of all public mail an hour.\n"
        text += "# TYPE postern_mail_caps_hit_total counter\n"
        for entry in service.mailCaps.snapshot() {
            text += #"postern_mail_caps_hit_total{cap="\#(entry.cap)"} \#(entry.count)"# + "\n"
        }
        text += "# HELP postern_challenges_total Requests that send mail or SMS by how they met the challenge (--challenge): asked to solve one, came with a solution accepted, or with one refused.\n"
        text += "# TYPE postern_challenges_total counter\n"
        for entry in service.challenges.snapshot() {
            text += #"postern_challenges_total{outcome="\#(entry.outcome)"} \#(entry.count)"# + "\n"
        }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Array(text.utf8))
    }

    /// Answers a request to the metrics listener (`--metrics-listen`): `/metrics` with no token —
    /// whoever can reach that address is trusted with it — and 404 for every other path.
    public func serveMetrics(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path == "/metrics" else {
            return .error(404, code: .notFound, message: "This listener serves only /metrics.")
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.error(405, code: .methodNotAllowed, message: "/metrics takes GET.")
            response.headers.append(("Allow", "GET"))
            return response
        }
        var response = Self.metricsAnswer(service: runtime.service, metrics: metrics, housekeeping: runtime.housekeeping, reclaims: runtime.reclaims, webhooks: runtime.webhooks)
        if request.method == "HEAD" { response.body = [] }
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }
}
