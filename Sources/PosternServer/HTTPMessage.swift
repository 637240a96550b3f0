import Foundation
import PosternAPI

/// An HTTP request as the router sees it: no C types.
public struct HTTPRequest: Sendable {
    /// GET, HEAD, POST, …
    public let method: String
    /// The path without the query string, percent-decoded.
    public let path: String
    /// The path as it was sent (not decoded): routes split it at its `/` and decode each segment
    /// once, so a path parameter may hold an encoded `/` or `%`.
    public let rawPath: String
    /// The decoded query parameters.
    public let query: [String: String]
    /// The request headers the router reads (see `RequestHeaders.forwarded`), names lower-cased,
    /// repeated lines joined with ", " in arrival order.
    public let headers: [String: String]
    /// The body (at most `HTTPServer.maximumBodySize` bytes).
    public let body: [UInt8]
    /// The peer's IP address, from the socket.
    public let clientIP: String

    /// A request; `rawPath` nil when `path` is as it was sent (nothing in it is encoded).
    public init(
        method: String, path: String, rawPath: String? = nil, query: [String: String], headers: [String: String], body: [UInt8],
        clientIP: String
    ) {
        self.method = method
        self.path = path
        self.rawPath = rawPath ?? path
        self.query = query
        self.headers = headers
        self.body = body
        self.clientIP = clientIP
    }
}

/// An HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Response headers.
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    public static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    /// The API's error shape: `{"error": {"code", "message", …details}}`, with `Retry-After`
    /// when the details carry `retryAfter`. The one builder of error answers.
    public static func error(_ status: Int, code: APIErrorCode, message: String, details: [String: String] = [:]) -> HTTPResponse {
        error(status, rawCode: code.rawValue, message: message, details: details)
    }

    /// An error answer for a code already in an `AuthError` (built from the catalogue).
    static func error(_ status: Int, rawCode code: String, message: String, details: [String: String] = [:]) -> HTTPResponse {
        var object: [String: String] = ["code": code, "message": message]
        for (key, value) in details where key != "retryAfter" { object[key] = value }
        let text = JSONValue.object(["error": .object(strings: object)]).sortedJSONText
        var response = HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        if let retry = details["retryAfter"] { response.headers.append(("Retry-After", retry)) }
        return response
    }
}
