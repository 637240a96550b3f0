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
    /// the decoded `path`, a pattern by `rawPath` (as sent), split before it is decoded.
    func candidates(_ path: String, rawPath: String) -> [Candidate] {
        if let found = fixed[path] { return found }
        return patterned.compactMap { route in route.match(rawPath).map { (route, $0) } }
    }
}
