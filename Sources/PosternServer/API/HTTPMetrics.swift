import Foundation
import Synchronization

/// Request counts by route and status, and a latency histogram per route, in memory.
final class HTTPMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct Latency {
        var counts = [Int](repeating: 0, count: HTTPMetrics.buckets.count)
        var total = 0
        var sum = 0.0

        mutating func add(_ seconds: Double) {
            for (index, bound) in HTTPMetrics.buckets.enumerated() where seconds <= bound { counts[index] += 1 }
            total += 1
            sum += seconds
        }
    }

    private struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Latency] = [:]
    }

    /// One lock per shard, a thread always using the same shard: with one lock for all, 64 pool
    /// threads on 2 cores spent a quarter of their time in its slow path.
    private final class Shard: Sendable {
        let state = Mutex(State())
    }

    private let shards = (0..<16).map { _ in Shard() }

    func record(route: String, method: String, status: Int, seconds: Double) {
        // A Fibonacci hash of the thread's id: thread ids are addresses, evenly spaced.
        let thread = UInt64(pthread_self())
        let shard = shards[Int((thread &* 0x9E37_79B9_7F4A_7C15) >> 60)]
        shard.state.withLock { state in
            // In place: no string to build and no copy of the bucket array per request.
            state.requests[RequestKey(method: method, route: route, status: status), default: 0] += 1
            state.latency[route, default: Latency()].add(seconds)
        }
    }

    /// The Prometheus text of the HTTP metrics.
    func render() -> String {
        var snapshot = State()
        for shard in shards {
            let part = shard.state.withLock { $0 }
            snapshot.requests.merge(part.requests, uniquingKeysWith: +)
            snapshot.latency.merge(part.latency) { a, b in
                Latency(counts: zip(a.counts, b.counts).map(+), total: a.total + b.total, sum: a.sum + b.sum)
            }
        }
        var lines = [
            "# HELP postern_http_requests_total HTTP requests by route, method and status.",
            "# TYPE postern_http_requests_total counter",
        ]
        let requests = snapshot.requests.sorted { ($0.key.method, $0.key.route, $0.key.status) < ($1.key.method, $1.key.route, $1.key.status) }
        for (key, count) in requests {
            lines.append(#"postern_http_requests_total{method="\#(key.method)",route="\#(key.route)",status="\#(key.status)"} \#(count)"#)
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
