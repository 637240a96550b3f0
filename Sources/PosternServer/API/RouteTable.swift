/// The router's routes, indexed so that finding a request's routes costs one dictionary lookup:
/// splitting the path against every route on each request was the largest cost of a `/healthz`
/// answer under load. A fixed path (no `{name}` segment) wins over a pattern; none of our fixed
/// paths is also matched by a pattern.
struct RouteTable: Sendable {
    /// A route with the path parameters it matched.
    typealias Candidate = (route: Route, parameters: [String: String])

    /// Every route, in declaration order.
    let routes: [Route]
    /// Fixed paths, each with its routes (one per method) in declaration order.
    private let fixed: [String: [Candidate]]
    /// Routes with `{name}` segments.
    private let patterned: [Route]

    init(_ routes: [Route]) {
        self.routes = routes
        var fixed: [String: [Candidate]] = [:]
        var patterned: [Route] = []
        for route in routes {
            if route.path.contains("{") {
                patterned.append(route)
            } else {
                fixed[route.path, default: []].append((route, [:]))
            }
        }
        self.fixed = fixed
        self.patterned = patterned
    }

    /// The routes whose path matches the request's, with their path parameters: a fixed path by
    /// the decoded `path`, a pattern by `rawPath` (as sent), split before it is decoded. A raw
    /// path with an encoded `/` (`%2F`) matches no fixed path: its segments are not the decoded
    /// path's (`/v1%2Fadmin%2Fusers` is one segment, not `/v1/admin/users`).
    func candidates(_ path: String, rawPath: String) -> [Candidate] {
        if let found = fixed[path], rawPath == path || !Self.hasEncodedSlash(rawPath) { return found }
        return patterned.compactMap { route in route.match(rawPath).map { (route, $0) } }
    }

    /// Whether `rawPath` holds `%2F` or `%2f` (asked only of a path that was encoded at all).
    static func hasEncodedSlash(_ rawPath: String) -> Bool { rawPath.lowercased().contains("%2f") }
}
