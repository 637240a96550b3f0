import Synchronization

/// Request counts by route and status, and a latency histogram per route, in memory.
final class HTTPMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct Latency {
        var counts = [Int](repeating: 0, count: HTTPMetrics.buckets.count)
        var total = 0
        var sum = 0.0
    }

    private struct State {
        var requests: [String: Int] = [:]
        var latency: [String: Latency] = [:]
    }

    private let state = Mutex(State())

    func record(route: String, method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests["\(method) \(route) \(status)", default: 0] += 1
            var latency = state.latency[route] ?? Latency()
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { latency.counts[index] += 1 }
            latency.total += 1
            latency.sum += seconds
            state.latency[route] = latency
        }
    }

    /// The Prometheus text of the HTTP metrics.
    func render() -> String {
        let snapshot = state.withLock { $0 }
        var lines = [
            "# HELP postern_http_requests_total HTTP requests by route, method and status.",
            "# TYPE postern_http_requests_total counter",
        ]
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: " ")
            guard parts.count == 3 else { continue }
            lines.append(#"postern_http_requests_total{method="\#(parts[0])",route="\#(parts[1])",status="\#(parts[2])"} \#(count)"#)
        }
        lines += [
            "# HELP postern_http_request_duration_seconds Time to answer a request.",
            "# TYPE postern_http_request_duration_seconds histogram",
        ]
        for (route, latency) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            for (index, bound) in Self.buckets.enumerated() {
                lines.append(#"postern_http_request_duration_seconds_bucket{route="\#(route)",le="\#(bound)"} \#(latency.counts[index])"#)
            }
            lines.append(#"postern_http_request_duration_seconds_bucket{route="\#(route)",le="+Inf"} \#(latency.total)"#)
            lines.append(#"postern_http_request_duration_seconds_sum{route="\#(route)"} \#(latency.sum)"#)
            lines.append(#"postern_http_request_duration_seconds_count{route="\#(route)"} \#(latency.total)"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
