/// An HTTP request as the router sees it: no C types.
public struct HTTPRequest: Sendable {
    /// GET, HEAD, POST, …
    public let method: String
    /// The path without the query string.
    public let path: String
    /// The decoded query parameters.
    public let query: [String: String]
    /// Request headers, names lower-cased.
    public let headers: [String: String]
    /// The body (at most `HTTPServer.maximumBodySize` bytes).
    public let body: [UInt8]
    /// The peer's IP address, from the socket.
    public let clientIP: String
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

    /// The API's error shape: `{"error": {"code", "message"}}`.
    public static func error(_ status: Int, code: String, message: String) -> HTTPResponse {
        json(status, #"{"error":{"code":"\#(code)","message":\#(jsonString(message))}}"#)
    }
}

/// `text` as a JSON string literal.
public func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                out += "\\u00" + String(scalar.value, radix: 16).leftPadded(to: 2)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
