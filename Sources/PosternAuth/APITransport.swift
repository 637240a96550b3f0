import Foundation
import PosternAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the server: JSON in and out through the wire module's coders, errors
/// turned into `PosternAuthError`. Holds no state but its configuration.
struct APITransport: Sendable {
    let baseURL: URL
    let session: URLSession
    /// The longest one call may take (URLSession's request timeout).
    let timeout: TimeInterval

    /// Sends `body` to `path` and decodes the answer as `Answer`.
    /// - Throws: `PosternAuthError`: the server's error mapped by `PosternAuthError.from`,
    ///   `.network` when no answer came, `.protocolMismatch` when it could not be read.
    func send<Answer: Decodable>(
        _ method: String, _ path: String, body: (some Encodable)?, bearer: String? = nil,
        credentials: Credentials? = nil, as: Answer.Type
    ) async throws(PosternAuthError) -> Answer {
        let (data, status) = try await exchange(method, path, body: body, bearer: bearer, credentials: credentials)
        if let none = NoContent() as? Answer { return none }
        return try decode(data, status: status, as: Answer.self)
    }

    /// Sends `body` to `path` and ignores the answer's body (202 and 204 answers).
    /// - Throws: as `send(_:_:body:bearer:credentials:as:)`.
    func send(_ method: String, _ path: String, body: (some Encodable)?, bearer: String? = nil) async throws(PosternAuthError) {
        _ = try await exchange(method, path, body: body, bearer: bearer, credentials: nil)
    }

    /// Decodes `data` as `Answer`.
    /// - Throws: `.protocolMismatch` when it is not one.
    func decode<Answer: Decodable>(_ data: Data, status: Int, as: Answer.Type) throws(PosternAuthError) -> Answer {
        do {
            return try APIJSON.decode(Answer.self, from: Array(data))
        } catch {
            throw .protocolMismatch(status: status, code: "UNREADABLE_ANSWER", message: "The answer is not a \(Answer.self).")
        }
    }

    /// One exchange; the answer's body and status when it is a 2xx.
    func exchange(
        _ method: String, _ path: String, body: (some Encodable)?, bearer: String?, credentials: Credentials?
    ) async throws(PosternAuthError) -> (Data, Int) {
        // A path may carry a query (`/v1/me/activity?limit=10`): its parts are the caller's to escape.
        let (route, query) = path.firstIndex(of: "?").map { (String(path[..<$0]), String(path[path.index(after: $0)...])) } ?? (path, nil)
        var url = baseURL.appendingPathComponent(String(route.dropFirst()))
        if let query, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.percentEncodedQuery = query
            url = components.url ?? url
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = Data(APIJSON.encode(body))
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw .network(reason: (error as NSError).localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw .network(reason: "The answer is not HTTP.")
        }
        guard (200..<300).contains(http.statusCode) else {
            guard let error = try? APIJSON.decode(ErrorBody.self, from: Array(data)) else {
                throw .protocolMismatch(status: http.statusCode, code: "UNREADABLE_ERROR", message: "HTTP \(http.statusCode) without an error object.")
            }
            let retryAfter = http.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) }
            throw PosternAuthError.from(status: http.statusCode, detail: error.error, credentials: credentials, retryAfter: retryAfter)
        }
        return (data, http.statusCode)
    }
}
