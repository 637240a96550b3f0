import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

/// The HTTP surface of API.md: routes requests to the flows, answers JSON errors that name the
/// field, counts everything for `/metrics`, and serves its own table as `/openapi.json`.
public final class APIRouter: Sendable {
    let runtime: ServerContext
    let metrics: HTTPMetrics
    let table: RouteTable
    let clientAddresses: ClientAddressPolicy
    /// The requests waiting for an approval (`POST /v1/email-link/wait`).
    let waits = ApprovalWaits()
    /// Whether routes that can answer from their commit do (``handleLater(_:reply:)``).
    let answersFromCommit: Bool

    /// Builds the routes over `runtime`; `clientAddresses` says whose address a request counts
    /// against (build it from the settings with `ClientAddressPolicy(settings:)`).
    public init(runtime: ServerContext, clientAddresses: ClientAddressPolicy) {
        self.runtime = runtime
        self.clientAddresses = clientAddresses
        // A CAPTCHA's check waits on its service: the gated routes then run on threads that may wait.
        answersFromCommit = runtime.service.answersFromCommit && !runtime.service.challenges.verifiesOverNetwork
        let metrics = HTTPMetrics()
        self.metrics = metrics
        var routes = Self.apiRoutes(runtime, waits: waits) + Self.phoneRoutes(runtime) + ActionPages(runtime: runtime).routes()
            + Self.operationsRoutes(runtime, metrics: metrics) + Self.appLinkRoutes(runtime)
            + Self.oidcRoutes(runtime) + OIDCPages(runtime: runtime).routes() + Self.oidcClientRoutes(runtime)
            + Self.providerRoutes(runtime) + Self.sessionRoutes(runtime)
        routes += Self.suppressionRoutes(runtime) + Self.deliveryEventRoutes(runtime)
        let contract = OpenAPIDocument.render(
            routes + [OpenAPIDocument.placeholderRoute], refinements: .init(settings: runtime.settings))
        routes.append(OpenAPIDocument.route(serving: contract))
        self.table = RouteTable(routes)
    }

    /// Ends the waits for approvals at once (they answer "pending"), so a stopping server does
    /// not wait out their 25 seconds.
    public func stopWaiting() { waits.stop() }

    /// Answers one request (called from the HTTP server's threads).
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        var label = "unmatched"
        var response: HTTPResponse
        let candidates = table.candidates(request.path, rawPath: request.rawPath)
        if candidates.isEmpty {
            response = JSONAnswer.error(.noSuchEndpoint(request.path))
        } else if let (route, parameters) = candidates.first(where: { $0.0.method == request.method })
            ?? (request.method == "HEAD" ? candidates.first(where: { $0.0.method == "GET" }) : nil)
        {
            label = route.path
            response = run(route, parameters: parameters, request: request)
            if request.method == "HEAD" { response.body = [] }
        } else {
            let allowed = Set(candidates.map(\.0.method)).sorted().joined(separator: ", ")
            // HTTP-level refusals (405 here, 413 and 415 below) are not the flows' errors.
            response = .error(405, code: .methodNotAllowed, message: "\(request.path) takes \(allowed).")
            response.headers.append(("Allow", allowed))
        }
        return finished(response, route: label, request: request, start: start)
    }

    /// Answers `request` from the commit of its write when its route can (``Route/later``) and
    /// the store queues writes (`AuthService.answersFromCommit`): returns true, and `reply` is
    /// called once, perhaps from the store's writer thread. False, having done nothing, for every
    /// other request: answer it with ``handle(_:)`` on a thread that may wait.
    public func handleLater(_ request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        guard answersFromCommit, let (route, parameters) = table.candidates(request.path, rawPath: request.rawPath).first(where: { $0.0.method == request.method }),
            let later = route.later
        else { return false }
        let start = DispatchTime.now().uptimeNanoseconds
        let finish: @Sendable (HTTPResponse) -> Void = { [self] response in
            reply(finished(response, route: route.path, request: request, start: start))
        }
        let clientIP = clientAddress(request)
        if let refusal = Self.mediaTypeRefusal(route, request) {
            finish(refusal)
            return true
        }
        do throws(AuthError) {
            try Self.refuseNUL(request)
            try admit(route, request: request, clientIP: clientIP)
            try Self.withOrigin(of: route, request: request, clientIP: clientIP) { () throws(AuthError) in
                try later(RouteContext(request: request, parameters: parameters, clientIP: clientIP)) { [self] result in
                    switch result {
                    case .success(let response): finish(response)
                    case .failure(let error): finish(failure(error, route: route, request: request))
                    }
                }
            }
        } catch {
            finish(failure(error, route: route, request: request))
        }
        return true
    }

    /// Refuses a path or query with an encoded NUL (`%00`), answered as the route answers errors:
    /// the store reads text up to its first NUL, so the handler and the SQL would see two different
    /// values (libmicrohttpd's own decoding cut the C string there).
    static func refuseNUL(_ request: HTTPRequest) throws(AuthError) {
        if request.path.utf8.contains(0) || request.query.contains(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }) {
            throw .invalidArgument("The request's path or query holds an encoded NUL (%00).")
        }
    }

    /// What every answer gets on its way out: `no-store` unless the route chose its caching (the
    /// pages set it; the style sheet is cacheable), and its count and time in the metrics.
    private func finished(_ response: HTTPResponse, route label: String, request: HTTPRequest, start: UInt64) -> HTTPResponse {
        var response = response
        if !response.headers.contains(where: { $0.0.lowercased() == "cache-control" }) {
            response.headers.append(("Cache-Control", "no-store"))
        }
        metrics.record(route: label, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        return response
    }

    private func run(_ route: Route, parameters: [String: String], request: HTTPRequest) -> HTTPResponse {
        let clientIP = clientAddress(request)
        if let refusal = Self.mediaTypeRefusal(route, request) { return refusal }
        do throws(AuthError) {
            try Self.refuseNUL(request)
            try admit(route, request: request, clientIP: clientIP)
            return try Self.withOrigin(of: route, request: request, clientIP: clientIP) { () throws(AuthError) in
                try route.handler(RouteContext(request: request, parameters: parameters, clientIP: clientIP))
            }
        } catch {
            return failure(error, route: route, request: request)
        }
    }

    /// Runs `body` with the request's ``SessionOrigin`` bound, on the routes a person's device
    /// calls (public and signed-in: a sign-in among them issues a session from it): the
    /// User-Agent's ``DeviceName`` and the client's network.
    private static func withOrigin<T>(
        of route: Route, request: HTTPRequest, clientIP: String, _ body: () throws(AuthError) -> T
    ) throws(AuthError) -> T {
        guard route.access == .public || route.access == .user else { return try body() }
        let origin = SessionOrigin(deviceName: DeviceName(userAgent: request.headers["user-agent"]).text, clientIP: clientIP)
        return try SessionOrigin.$current.withValue(origin) { Result { () throws(AuthError) in try body() } }.get()
    }

    /// Before the rate limit and any work: a refused body costs the client nothing. An empty
    /// body is no media type at all (the route's own check answers it, after the token, so a
    /// caller without one learns only that it needs one).
    private static func mediaTypeRefusal(_ route: Route, _ request: HTTPRequest) -> HTTPResponse? {
        guard !request.body.isEmpty, let accepted = route.bodyMediaTypes,
            !RequestContentType.accepts(request.headers["content-type"], oneOf: accepted.types)
        else { return nil }
        return .error(415, code: .unsupportedMediaType, message: accepted.refusal)
    }

    /// The admin token of an admin route, within its guess budget per client IP
    /// (``AdminTokenBudget``: over it, 429 before the token is looked at), and the per-IP limit
    /// (`--ip-per-minute`), both counted in the store every daemon shares, once, for every public
    /// request that can change state or check a credential (GET and HEAD only look).
    private func admit(_ route: Route, request: HTTPRequest, clientIP: String) throws(AuthError) {
        if route.access == .admin {
            guard let expected = runtime.settings.adminToken else {
                throw AuthError.adminDisabled
            }
            try runtime.service.adminTokenGuesses.refusal(ip: clientIP)
            let given = RouteContext(request: request, parameters: [:], clientIP: clientIP).bearer ?? ""
            guard ConstantTime.equals(Array(given.utf8), Array(expected.utf8)) else {
                try runtime.service.adminTokenGuesses.admit(ip: clientIP)
                throw AuthError.adminTokenWrong
            }
        }
        if route.access == .public, request.method != "GET", request.method != "HEAD" {
            try runtime.service.clientLimit.admit(ip: clientIP)
        }
    }

    /// A route's error as it is answered (logged first when it is the server's fault).
    private func failure(_ error: AuthError, route: Route, request: HTTPRequest) -> HTTPResponse {
        if error.isServerFault {
            runtime.logger.error("request failed", ["route": route.path, "code": error.code, "detail": error.logDetail ?? error.message])
        } else if let detail = error.logDetail {
            // A refusal whose reason the caller is not told (a provider's token: which check failed).
            runtime.logger.info("request refused", ["route": route.path, "code": error.code, "detail": detail])
        }
        return route.errorAnswer?(error, request) ?? JSONAnswer.error(error)
    }

    /// The client IP: the socket's, or behind trusted proxies the nearest X-Forwarded-For hop
    /// they did not write (see `ClientAddressPolicy`).
    func clientAddress(_ request: HTTPRequest) -> String {
        clientAddresses.clientIP(peer: request.clientIP, forwardedFor: request.headers["x-forwarded-for"])
    }

    /// The routes, for the OpenAPI document and its test.
    public var routeTable: [(method: String, path: String)] { table.routes.map { ($0.method, $0.path) } }

    /// The routes with their contracts, for the tests that hold the wire types to the document.
    var routes: [Route] { table.routes }
}
