import Foundation
import PosternAPI
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
    /// An OpenID Connect client, by its own credentials (the token endpoint's client
    /// authentication, an access token): not counted per IP, since one relying party's server
    /// makes every exchange of its users, and its credentials are 256 random bits.
    case client
}

/// What a handler gets: the request, its path parameters, the client IP, the bearer token.
struct RouteContext: Sendable {
    let request: HTTPRequest
    let parameters: [String: String]
    let clientIP: String

    /// A listing's `?limit=` (1…`maximum`, 100 when absent) and `?cursor=` (read by `parse`, nil
    /// when absent), as the admin API's lists take them.
    /// - Throws: `invalidArgument` naming the one that is out of range or not a cursor this server answered.
    func page<Cursor>(maximum: Int, _ parse: (String) -> Cursor?) throws(AuthError) -> (limit: Int, cursor: Cursor?) {
        var limit = 100
        if let text = request.query["limit"] {
            guard let parsed = Int(text), (1...maximum).contains(parsed) else { throw .invalidArgument("limit must be 1 to \(maximum).") }
            limit = parsed
        }
        guard let text = request.query["cursor"] else { return (limit, nil) }
        guard let cursor = parse(text) else { throw .invalidArgument("cursor is not one this server answered.") }
        return (limit, cursor)
    }

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

    /// The body as the wire type `T` (no body at all is `{}`; a body of blanks is no JSON text,
    /// and refused like any other: schemathesis saw `\r` taken as `{}`).
    /// - Throws: `AuthError.invalidArgument` naming the field that is missing or of the wrong type.
    func body<T: Decodable>(_ type: T.Type) throws(AuthError) -> T {
        do {
            return try APIJSON.decode(type, from: request.body.isEmpty ? Array("{}".utf8) : request.body)
        } catch let error as DecodingError {
            throw .invalidArgument(Self.sentence(error))
        } catch {
            throw .invalidArgument("The body must be a JSON object.")
        }
    }

    /// What a decoding failure means, naming the field (never its value).
    static func sentence(_ error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
        func kind(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: "a string"
            case is Bool.Type: "true or false"
            case is Int.Type, is Int64.Type, is Double.Type: "a number"
            default: "a JSON object"
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(field(context.codingPath + [key])) is required."
        case .valueNotFound(_, let context):
            return "\(field(context.codingPath)) is required."
        case .typeMismatch(let type, let context):
            let path = field(context.codingPath)
            return path.isEmpty ? "The body must be a JSON object." : "\(path) must be \(kind(type))."
        case .dataCorrupted(let context):
            let path = field(context.codingPath)
            return path.isEmpty ? "The body must be a JSON object." : "\(path) is malformed."
        @unknown default:
            return "The body must be a JSON object."
        }
    }
}

/// One endpoint: method, path pattern (`{name}` segments capture), and its handler.
struct Route: Sendable {
    let method: String
    let path: String
    let summary: String
    let access: RouteAccess
    /// The success status, for the OpenAPI document.
    let status: Int
    /// What the route reads, answers and may refuse with, for the OpenAPI document (a route that
    /// says nothing still appears there, with its summary and success status).
    var contract = RouteContract()
    let handler: @Sendable (RouteContext) throws(AuthError) -> HTTPResponse
    /// How the route answers an error, its handler's or the router's (the per-IP limit): nil for
    /// the API's JSON error; the hosted page answers with a page in the request's language.
    var errorAnswer: (@Sendable (AuthError, HTTPRequest) -> HTTPResponse)? = nil
    /// The route's answer handed over once its write is committed (perhaps on the store's writer
    /// thread) instead of returned: set by ``answeringLater(method:path:summary:access:status:contract:_:)``,
    /// whose `handler` waits for it. ``APIRouter/handleLater(_:reply:)`` calls it from the HTTP
    /// server's polling thread, so nothing it does before its one write may wait.
    var later: Later? = nil

    /// A handler that hands its answer (or the failure of its write) over instead of returning
    /// it. What it throws is thrown before anything is written, and then it does not answer.
    typealias Later = @Sendable (RouteContext, @escaping @Sendable (Result<HTTPResponse, AuthError>) -> Void) throws(AuthError) -> Void

    /// A route that answers from the commit of its one write (``later``); its `handler` is that
    /// plus a wait, for the callers that can wait (the request threads, the tests).
    static func answeringLater(
        method: String, path: String, summary: String, access: RouteAccess, status: Int, contract: RouteContract,
        _ body: @escaping Later
    ) -> Route {
        Route(method: method, path: path, summary: summary, access: access, status: status, contract: contract, handler: { c throws(AuthError) in
            try AnswerSlot<HTTPResponse, AuthError>.waiting(missing: .internalError("the route did not answer")) { done throws(AuthError) in
                try body(c, done)
            }
        }, later: body)
    }

    /// This route, answering its errors with `answer` instead of the JSON error.
    func answeringErrors(_ answer: @escaping @Sendable (AuthError, HTTPRequest) -> HTTPResponse) -> Route {
        var route = self
        route.errorAnswer = answer
        return route
    }

    /// Whether a body sent to this route is JSON, so must say `Content-Type: application/json`:
    /// the API's `/v1/` endpoints that take one. The hosted page's form (`POST /action`) is not.
    var takesJSONBody: Bool {
        if case .raw = contract.request { return false }
        return path.hasPrefix("/v1/") && method != "GET" && method != "HEAD"
    }

    /// The media types a non-empty body sent to this route must name in `Content-Type`, and what
    /// a 415 says when it names another: `application/json` for the API's JSON routes, the raw
    /// route's own types (a mail report); nil where the type is not checked (no body, the hosted
    /// page's form).
    var bodyMediaTypes: (types: [String], refusal: String)? {
        if case .raw(let types, _) = contract.request {
            return (types, "\(path) takes a body sent as Content-Type: \(types.joined(separator: ", ")).")
        }
        return takesJSONBody ? (["application/json"], "A request body must be JSON sent as Content-Type: application/json.") : nil
    }

    /// The path parameters when `rawPath` (the path as sent, not decoded) matches this route's
    /// pattern. Each segment is decoded once, after the split: a parameter may hold an encoded `/`
    /// (`%2F`) or `%` (`%25`), as an imported uid may; bytes that are not UTF-8 once decoded are
    /// replaced (U+FFFD).
    func match(_ rawPath: String) -> [String: String]? {
        let pattern = path.split(separator: "/", omittingEmptySubsequences: false)
        let actual = rawPath.split(separator: "/", omittingEmptySubsequences: false)
        guard pattern.count == actual.count else { return nil }
        var parameters: [String: String] = [:]
        for (p, a) in zip(pattern, actual) {
            if p.hasPrefix("{") && p.hasSuffix("}") {
                guard !a.isEmpty else { return nil }
                parameters[String(p.dropFirst().dropLast())] = PercentDecoding.decodeRepairing(String(a))
            } else if p != a && PercentDecoding.decodeRepairing(String(a)) != p {
                return nil
            }
        }
        return parameters
    }
}
