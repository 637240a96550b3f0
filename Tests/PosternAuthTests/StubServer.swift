import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PosternAPI
@testable import PosternAuth

/// A server in the test process: a `PosternAuth` whose URLSession goes through `StubProtocol`
/// reaches this object's `answer` instead of the network, and every request is recorded. Each
/// instance has its own host, so tests running in parallel do not meet.
final class StubServer: @unchecked Sendable {
    /// One request as the client sent it.
    struct Request: Sendable {
        let method: String
        let path: String
        let bearer: String?
        let body: [UInt8]

        /// The body decoded as the wire type `type`.
        func decode<Body: Decodable>(_ type: Body.Type) throws -> Body { try APIJSON.decode(type, from: body) }
    }

    /// An answer: the status and the JSON body.
    struct Answer: Sendable {
        let status: Int
        let body: [UInt8]

        static func ok(_ value: some Encodable) -> Answer { Answer(status: 200, body: APIJSON.encode(value)) }
        static func error(_ status: Int, _ code: APIErrorCode, anonymousUid: String? = nil) -> Answer {
            Answer(status: status, body: APIJSON.encode(ErrorBody(error: .init(code: code.rawValue, message: "m", anonymousUid: anonymousUid))))
        }
    }

    let host = "stub-\(UUID().uuidString.lowercased()).test"
    private let answer: @Sendable (Request) -> Answer
    // `lock` guards `recorded`.
    private let lock = NSLock()
    private var recorded: [Request] = []
    // `registryLock` guards `servers`.
    nonisolated(unsafe) private static var servers: [String: Weak] = [:]
    private struct Weak { weak var server: StubServer? }
    private static let registryLock = NSLock()

    /// A server answering each request with `answer`.
    init(_ answer: @escaping @Sendable (Request) -> Answer) {
        self.answer = answer
        Self.registryLock.withLock { Self.servers[host] = Weak(server: self) }
    }

    deinit {
        let host = host
        Self.registryLock.withLock { _ = Self.servers.removeValue(forKey: host) }
    }

    /// The requests so far, in order.
    var requests: [Request] { lock.withLock { recorded } }

    /// A client of this server with an empty memory storage.
    func device() -> PosternAuth {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubProtocol.self]
        return PosternAuth(configuration: .init(
            serverURL: URL(string: "https://\(host)")!, storage: MemorySessionStorage(), urlSession: URLSession(configuration: configuration)))
    }

    fileprivate static func server(for host: String) -> StubServer? { registryLock.withLock { servers[host]?.server } }

    fileprivate func handle(_ request: Request) -> Answer {
        lock.withLock { recorded.append(request) }
        return answer(request)
    }

    // MARK: Answers the tests share

    static func session(_ uid: String, anonymous: Bool = false, token: String = "id-token") -> SessionBody {
        SessionBody(uid: uid, idToken: "\(token)-\(uid)", refreshToken: "refresh-\(uid)", expiresIn: 3600, isAnonymous: anonymous, email: nil)
    }

    static func login(_ uid: String, isNewUser: Bool, migration: LoginBody.Migration? = nil, token: String = "id-token") -> LoginBody {
        LoginBody(uid: uid, email: "ada@example.org", isNewUser: isNewUser, session: session(uid, token: token), migration: migration, needsPassword: false)
    }

    static func user(_ uid: String, providers: [String], anonymous: Bool = false, displayName: String? = nil) -> UserBody {
        UserBody(
            uid: uid, email: anonymous ? nil : "ada@example.org", emailVerified: !anonymous, displayName: displayName, isAnonymous: anonymous,
            providers: providers, attributes: [:], createdAt: "2026-12-07T00:00:00Z", lastSignInAt: nil, disabled: false)
    }
}

/// Hands each request of a stubbed URLSession to the `StubServer` of its host.
final class StubProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let server = StubServer.server(for: url.host ?? "") else {
            client?.urlProtocol(self, didFailWithError: URLError(.cannotFindHost))
            return
        }
        let recorded = StubServer.Request(
            method: request.httpMethod ?? "GET", path: url.path,
            bearer: request.value(forHTTPHeaderField: "Authorization").map { String($0.dropFirst("Bearer ".count)) },
            body: Self.body(of: request))
        let answer = server.handle(recorded)
        guard let response = HTTPURLResponse(
            url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])
        else {
            client?.urlProtocol(self, didFailWithError: URLError(.badServerResponse))
            return
        }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(answer.body))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    /// The body: URLSession hands it over as a stream on some platforms.
    private static func body(of request: URLRequest) -> [UInt8] {
        if let body = request.httpBody { return Array(body) }
        guard let stream = request.httpBodyStream else { return [] }
        stream.open()
        defer { stream.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }
}
