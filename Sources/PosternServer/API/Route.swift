import PosternCore

/// Who may call a route.
enum RouteAccess: String, Sendable {
    /// Anyone (rate-limited per client IP where it sends mail or checks credentials).
    case `public`
    /// `Authorization: Bearer <idToken>`.
    case user
    /// `Authorization: Bearer <admin token>`.
    case admin
    /// Operations: health, metrics, keys, the contract.
    case operations
}

/// What a handler gets: the request, its path parameters, the client IP, the bearer token.
struct RouteContext: Sendable {
    let request: HTTPRequest
    let parameters: [String: String]
    let clientIP: String

    /// The bearer token, or nil.
    var bearer: String? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The ID token, required.
    func idToken() throws(AuthError) -> String {
        guard let bearer else { throw .invalidIDToken }
        return bearer
    }

    func body() throws(AuthError) -> JSONBody { try JSONBody(request.body) }
}

/// One endpoint: method, path pattern (`{name}` segments capture), and its handler.
struct Route: Sendable {
    let method: String
    let path: String
    let summary: String
    let access: RouteAccess
    /// The success status, for the OpenAPI document.
    let status: Int
    let handler: @Sendable (RouteContext) throws(AuthError) -> HTTPResponse

    /// Whether a body sent to this route is JSON, so must say `Content-Type: application/json`:
    /// the API's `/v1/` endpoints that take one. The hosted page's form (`POST /action`) is not.
    var takesJSONBody: Bool { path.hasPrefix("/v1/") && method != "GET" && method != "HEAD" }

    /// The path parameters when `path` matches this route's pattern.
    func match(_ requestPath: String) -> [String: String]? {
        let pattern = path.split(separator: "/", omittingEmptySubsequences: false)
        let actual = requestPath.split(separator: "/", omittingEmptySubsequences: false)
        guard pattern.count == actual.count else { return nil }
        var parameters: [String: String] = [:]
        for (p, a) in zip(pattern, actual) {
            if p.hasPrefix("{") && p.hasSuffix("}") {
                guard !a.isEmpty else { return nil }
                parameters[String(p.dropFirst().dropLast())] = String(a).removingPercentEncoding ?? String(a)
            } else if p != a {
                return nil
            }
        }
        return parameters
    }
}
