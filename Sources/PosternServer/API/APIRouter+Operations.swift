import Foundation
import PosternCore

extension APIRouter {
    /// Health, readiness, metrics and the public keys.
    static func operationsRoutes(_ runtime: PosternRuntime, metrics: HTTPMetrics) -> [Route] {
        let service = runtime.service
        return [
            Route(method: "GET", path: "/healthz", summary: "Liveness", access: .operations, status: 200) { _ throws(AuthError) in
                .json(200, #"{"status":"ok"}"#)
            },
            Route(method: "GET", path: "/readyz", summary: "Readiness: the store answers", access: .operations, status: 200) { _ throws(AuthError) in
                do {
                    _ = try service.outboxCounts()
                    return .json(200, #"{"status":"ready"}"#)
                } catch {
                    return JSONAnswer.error(.unavailable("The store does not answer."))
                }
            },
            Route(method: "GET", path: "/.well-known/jwks.json", summary: "Public keys of ID tokens", access: .operations, status: 200) { _ throws(AuthError) in
                var response = HTTPResponse.json(200, JSONAnswer.encode(runtime.keys.current.jwks))
                response.headers.append(("Access-Control-Allow-Origin", "*"))
                return response
            },
            Route(method: "GET", path: "/metrics", summary: "Prometheus metrics", access: .operations, status: 200) { _ throws(AuthError) in
                var text = metrics.render()
                text += "# HELP postern_outbox_messages Outbox messages by state.\n# TYPE postern_outbox_messages gauge\n"
                let counts = (try? service.outboxCounts()) ?? OutboxCounts()
                for state in OutboxState.allCases {
                    text += #"postern_outbox_messages{state="\#(state.rawValue)"} \#(counts[state])"# + "\n"
                }
                text += "# HELP postern_codes_total Action codes minted, consumed and refused.\n# TYPE postern_codes_total counter\n"
                for entry in service.metrics.snapshot() {
                    let label = entry.event == "refused" ? "reason" : "action"
                    text += #"postern_codes_total{event="\#(entry.event)",\#(label)="\#(entry.label)"} \#(entry.count)"# + "\n"
                }
                return HTTPResponse(
                    status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Array(text.utf8))
            },
        ]
    }
}

extension JSONAnswer {
    static func outbox(_ m: OutboxMessage) -> [String: Any] {
        [
            "id": m.id, "kind": m.intent.name, "recipient": m.recipient.address, "state": m.state.rawValue,
            "attempts": m.attempts, "nextAttemptAt": iso(m.nextAttemptAt), "createdAt": iso(m.createdAt),
            "giveUpAt": iso(m.giveUpAt), "finishedAt": m.finishedAt.map(iso) ?? NSNull(), "lastReply": m.lastReply ?? NSNull(),
        ]
    }
}
