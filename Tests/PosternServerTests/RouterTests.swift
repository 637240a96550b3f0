import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
@testable import PosternServer
import PosternTestSupport
import Synchronization
import Testing

/// The router over the in-memory store: routing, 404/405/Allow, HEAD, the admin token, the
/// metrics exposure, the JSON content type, the per-IP limit and what a 503 says — no HTTP
/// server, no SQLite, no mail.
@Suite("Router")
struct RouterTests {
    /// A store whose every transaction fails the way a broken database does, with the statement.
    final class BrokenStore: Store {
        func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T {
            throw StoreError.unavailable("disk I/O error: INSERT INTO action_requests (purpose, email) VALUES (?, ?)")
        }
        func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
            throw StoreError.unavailable("disk I/O error: INSERT INTO action_requests (purpose, email) VALUES (?, ?)")
        }
        let mailDoorbell = MailDoorbell()
    }

    static func harness(
        adminToken: String? = nil, ipPerMinute: Int64 = 0, breakStoreAfterStart: Bool = false,
        configure: (inout Settings) -> Void = { _ in }
    ) throws -> (router: APIRouter, log: @Sendable () -> [String]) {
        let harness = try harnessWithService(
            adminToken: adminToken, ipPerMinute: ipPerMinute, breakStoreAfterStart: breakStoreAfterStart, configure: configure)
        return (harness.router, harness.log)
    }

    /// The harness, with the flows behind the router (to mint links as the API would).
    static func harnessWithService(
        adminToken: String? = nil, ipPerMinute: Int64 = 0, breakStoreAfterStart: Bool = false,
        identityProviders: ProviderRegistry = .none, challengeHTTP: (any ProviderHTTP)? = nil,
        deliveryEventSources: DeliveryEventSources = .none, configure: (inout Settings) -> Void = { _ in }
    ) throws -> Harness {
        let store = InMemoryStore()
        let built = try router(
            over: breakStoreAfterStart ? BrokenStore() : store, keysIn: store, adminToken: adminToken, ipPerMinute: ipPerMinute,
            identityProviders: identityProviders, challengeHTTP: challengeHTTP, deliveryEventSources: deliveryEventSources,
            configure: configure)
        return Harness(router: built.router, service: built.service, store: store, log: built.log)
    }

    /// A router over `store` (its keys kept in `keyStore`), mail limits and the challenge off
    /// unless `configure` sets them; `challengeHTTP` stands for a CAPTCHA service.
    static func router(
        over store: any Store, keysIn keyStore: any Store, adminToken: String? = nil, ipPerMinute: Int64 = 0,
        identityProviders: ProviderRegistry = .none, challengeHTTP: (any ProviderHTTP)? = nil,
        deliveryEventSources: DeliveryEventSources = .none, configure: (inout Settings) -> Void = { _ in }
    ) throws -> (router: APIRouter, service: AuthService, log: @Sendable () -> [String]) {
        let clock = ManualClock()
        let vault = KeyVault(
            store: keyStore, box: try SecretBox(key: Array(repeating: 9, count: 32)), clock: clock, maxCodeLifetime: 86_400,
            rsaKeys: .madeOncePerProcess)
        let keys = try KeyRingCache(vault: vault, clock: clock)
        var settings = Settings()
        settings.adminToken = adminToken
        settings.ipPerMinute = ipPerMinute
        settings.mailInterval = 0
        settings.mailPerHour = 0
        settings.mailDomainPerHour = 0
        settings.mailPerHourTotal = 0
        settings.challenge.mode = .off
        configure(&settings)
        var config = AuthConfiguration(settings)
        if settings.challenge.captcha != nil { config.challenge.captchaSecret = "captcha-secret-for-tests" }
        let lines = LogLines()
        let logger = Logger(label: "test", sink: { lines.append($0) })
        let service = try AuthService(
            store: store, keys: keys, clock: clock, config: config, hasher: .fastForTests, logger: logger, identityProviders: identityProviders,
            challengeHTTP: challengeHTTP, deliveryEventSources: deliveryEventSources)
        let context = ServerContext(
            service: service, keys: keys, settings: settings, logger: logger, pages: try BundledTemplates.pages(branding: settings.branding))
        let router = APIRouter(runtime: context, clientAddresses: try ClientAddressPolicy(settings: settings))
        return (router, service, { lines.all() })
    }

    /// A router over the in-memory store, with what is behind it.
    struct Harness {
        let router: APIRouter
        let service: AuthService
        let store: InMemoryStore
        let log: @Sendable () -> [String]
    }

    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func all() -> [String] { lines.withLock { $0 } }
    }

    static func request(
        _ method: String, _ path: String, query: [String: String] = [:], body: String? = nil,
        contentType: String? = "application/json", bearer: String? = nil, ip: String = "192.0.2.1"
    ) -> HTTPRequest {
        var headers: [String: String] = [:]
        if body != nil, let contentType { headers["content-type"] = contentType }
        if let bearer { headers["authorization"] = "Bearer \(bearer)" }
        return HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array((body ?? "").utf8), clientIP: ip)
    }

    static func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static func errorCode(_ response: HTTPResponse) -> String? {
        (json(response)["error"] as? [String: Any])?["code"] as? String
    }

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test("an unknown path is 404, a known path with another method 405 with Allow, HEAD of a GET has no body")
    func routing() throws {
        let (router, _) = try Self.harness()
        let missing = router.handle(Self.request("GET", "/v1/nothing"))
        #expect(missing.status == 404 && Self.errorCode(missing) == "NOT_FOUND")
        let wrong = router.handle(Self.request("DELETE", "/v1/email-link/send"))
        #expect(wrong.status == 405 && Self.header(wrong, "Allow") == "POST")
        let head = router.handle(Self.request("HEAD", "/healthz"))
        #expect(head.status == 200 && head.body.isEmpty)
        let get = router.handle(Self.request("GET", "/healthz"))
        #expect(get.status == 200 && !get.body.isEmpty && Self.header(get, "Cache-Control") == "no-store")
    }

    @Test("admin routes: 404 with no admin token configured, 401 with a wrong one, through with the right one")
    func adminToken() throws {
        let token = "router-test-admin-token-0123456789"
        let disabled = try Self.harness().router.handle(Self.request("GET", "/v1/admin/users", query: ["email": "a@example.com"], bearer: token))
        #expect(disabled.status == 404 && Self.errorCode(disabled) == "NOT_FOUND")
        let (router, _) = try Self.harness(adminToken: token)
        for wrong in [nil, "x", token + "x", String(token.dropLast())] {
            let answer = router.handle(Self.request("GET", "/v1/admin/users", query: ["email": "a@example.com"], bearer: wrong))
            #expect(answer.status == 401, "\(wrong ?? "none")")
        }
        let right = router.handle(Self.request("GET", "/v1/admin/users", query: ["email": "a@example.com"], bearer: token))
        #expect(right.status == 404 && Self.errorCode(right) == "USER_NOT_FOUND")
        let metrics = router.handle(Self.request("GET", "/metrics", bearer: token))
        #expect(metrics.status == 200 && String(decoding: metrics.body, as: UTF8.self).contains("postern_http_requests_total"))
        #expect(router.handle(Self.request("GET", "/metrics")).status == 401)
    }

    @Test("/metrics counts the rows housekeeping removed, per table, every table listed")
    func housekeepingMetrics() throws {
        let service = try Self.harnessWithService().service
        let store = InMemoryStore()
        try store.write { tx in
            for index in 0..<3 { _ = try tx.consume(nonce: [UInt8(index)], expiresAt: 10) }
        }
        let counted = HousekeepingMetrics()
        _ = try Housekeeper(store: store, policy: RetentionPolicy(), clock: ManualClock(), metrics: counted).runRound()
        let answer = APIRouter.metricsAnswer(service: service, metrics: HTTPMetrics(), housekeeping: counted)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.contains("# TYPE postern_housekeeping_rows_removed_total counter"))
        #expect(text.contains(#"postern_housekeeping_rows_removed_total{table="consumed_codes"} 3"#))
        for rows in ExpiringRows.allCases where rows != .consumedCodes {
            #expect(text.contains(#"postern_housekeeping_rows_removed_total{table="\#(rows.rawValue)"} 0"#), "\(rows)")
        }
    }

    @Test("/metrics shows how the store's queued writes were batched where the store reports it (PostgreSQL), and nothing where not")
    func writeBatchMetrics() throws {
        let inner = InMemoryStore()
        let reporting = try Self.router(over: BatchReportingStore(inner), keysIn: inner)
        let text = String(decoding: APIRouter.metricsAnswer(service: reporting.service, metrics: HTTPMetrics(), housekeeping: HousekeepingMetrics()).body, as: UTF8.self)
        #expect(text.contains("# TYPE postern_store_write_batches_total counter\npostern_store_write_batches_total 7\n"))
        #expect(text.contains("postern_store_batched_writes_total 40\n"))
        #expect(text.contains("postern_store_batch_fallbacks_total 2\n"))
        let plain = try Self.harnessWithService().service
        let none = String(decoding: APIRouter.metricsAnswer(service: plain, metrics: HTTPMetrics(), housekeeping: HousekeepingMetrics()).body, as: UTF8.self)
        #expect(!none.contains("postern_store_write_batches_total"))
    }

    @Test("a JSON endpoint refuses a non-empty body that is not application/json (415) and queues nothing")
    func contentType() throws {
        let (router, _) = try Self.harness()
        let body = #"{"email":"a@example.com"}"#
        let plain = router.handle(Self.request("POST", "/v1/email-link/send", body: body, contentType: "text/plain"))
        #expect(plain.status == 415 && Self.errorCode(plain) == "UNSUPPORTED_MEDIA_TYPE")
        let none = router.handle(Self.request("POST", "/v1/email-link/send", body: body, contentType: nil))
        #expect(none.status == 415)
        let json = router.handle(Self.request("POST", "/v1/email-link/send", body: body, contentType: "application/json; charset=utf-8"))
        #expect(json.status == 202)
        let wrongType = router.handle(Self.request("POST", "/v1/email-link/send", body: #"{"email":7}"#))
        #expect(wrongType.status == 400 && Self.errorCode(wrongType) == "INVALID_ARGUMENT")
    }

    @Test("a raw route (the bounce report) takes only its own media types, by the same check as JSON: others are 415 naming them")
    func rawContentType() throws {
        let token = "router-test-admin-token-0123456789"
        let (router, _) = try Self.harness(adminToken: token)
        let report = "From: MAILER-DAEMON@example.net\r\nSubject: hello\r\n\r\nnot a report\r\n"
        for refused in ["application/json", "text/html", "message/rfc822x", "text/plain,message/rfc822", nil] as [String?] {
            let answer = router.handle(Self.request("POST", "/v1/admin/bounces", body: report, contentType: refused, bearer: token))
            #expect(answer.status == 415 && Self.errorCode(answer) == "UNSUPPORTED_MEDIA_TYPE", "\(refused ?? "none")")
            let message = (Self.json(answer)["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("/v1/admin/bounces takes a body sent as Content-Type: message/rfc822, text/plain"), "\(message)")
        }
        for taken in ["message/rfc822", "Message/RFC822; charset=us-ascii", " text/plain ", "application/octet-stream"] {
            let answer = router.handle(Self.request("POST", "/v1/admin/bounces", body: report, contentType: taken, bearer: token))
            #expect(answer.status == 200, "\(taken): \(answer.status)")
        }
    }

    @Test("a body decodes into its wire type; a missing or mistyped field is named, never echoed")
    func bodies() throws {
        let (router, _) = try Self.harness()
        func message(_ path: String, _ body: String) -> String? {
            let answer = router.handle(Self.request("POST", path, body: body))
            #expect(answer.status == 400 && Self.errorCode(answer) == "INVALID_ARGUMENT", "\(body)")
            return (Self.json(answer)["error"] as? [String: Any])?["message"] as? String
        }
        #expect(message("/v1/email-link/send", "{}") == "email is required.")
        #expect(message("/v1/email-link/send", #"{"email":null}"#) == "email is required.")
        #expect(message("/v1/email-link/send", #"{"email":["secret@example.com"]}"#) == "email must be a string.")
        #expect(message("/v1/email-link/complete", #"{"link":"x","allowMigration":1}"#) == "allowMigration must be true or false.")
        #expect(message("/v1/password/reset", "[1]") == "The body must be a JSON object.")
        #expect(message("/v1/password/reset", "{nope") == "The body must be a JSON object.")
        // Blanks are no JSON text (schemathesis found `\r` accepted as `{}` on PATCH /v1/me and
        // POST /v1/accounts/anonymous); no body at all is still `{}`.
        for blank in ["\r", " ", "\n\t "] {
            #expect(message("/v1/accounts/anonymous", blank) == "The body must be a JSON object.")
        }
        #expect(router.handle(Self.request("POST", "/v1/accounts/anonymous", body: "")).status == 200)
        // Unknown fields are ignored; null optionals are absent.
        let answer = router.handle(Self.request("POST", "/v1/password/reset", body: #"{"email":"a@example.com","continueUrl":null,"x":1}"#))
        #expect(answer.status == 202)
    }

    @Test("the per-IP limit: 429 with Retry-After past it, per client address")
    func perIPLimit() throws {
        let (router, _) = try Self.harness(ipPerMinute: 2)
        let body = #"{"email":"a@example.com"}"#
        #expect(router.handle(Self.request("POST", "/v1/password/reset", body: body)).status == 202)
        #expect(router.handle(Self.request("POST", "/v1/password/reset", body: body)).status == 202)
        let limited = router.handle(Self.request("POST", "/v1/password/reset", body: body))
        #expect(limited.status == 429 && Self.header(limited, "Retry-After") != nil)
        #expect(router.handle(Self.request("POST", "/v1/password/reset", body: body, ip: "192.0.2.2")).status == 202)
    }

    @Test("a 503 says a fixed sentence; the statement that failed goes to the log only")
    func unavailableSaysNoSQL() throws {
        let (router, log) = try Self.harness(breakStoreAfterStart: true)
        let answer = router.handle(Self.request("POST", "/v1/email-link/send", body: #"{"email":"a@example.com"}"#))
        #expect(answer.status == 503 && Self.errorCode(answer) == "UNAVAILABLE")
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(!text.contains("INSERT") && !text.contains("action_requests") && !text.contains("disk I/O"), "\(text)")
        #expect(log().contains { $0.contains("action_requests") }, "the operator's log has the detail")
    }
}

@Suite("Error kinds over HTTP")
struct ErrorKindStatusTests {
    @Test("each kind has its status, and every error keeps the status API.md and the catalogue (APIErrorCode.httpStatus) give its code")
    func statuses() {
        #expect(AuthError.Kind.allCases.map(\.httpStatus) == [400, 401, 403, 404, 409, 429, 503, 500])
        let expected: [(AuthError, Int)] = [
            (.invalidArgument("x"), 400), (.invalidEmail(EmailAddressError(.empty)), 400), (.code(.expired), 400),
            (.code(.badSignature), 400), (.invalidCode("x"), 400), (.weakPassword("x", rule: .tooShort), 400),
            (.invalidRefreshToken, 400), (.invalidContinueURL("x"), 400),
            (.invalidLoginCredentials, 400), (.emailMismatch, 400), (.invalidCodeVerifier, 400), (.userDisabled, 400),
            (.tokenRevoked, 401), (.invalidIDToken, 401), (.requiresRecentLogin, 401), (.adminTokenWrong, 401), (.signUpNotAllowed, 403),
            (.invitedAccountExists, 409),
            (.userNotFound, 404), (.adminDisabled, 404), (.noSuchEndpoint("/x"), 404), (.credentialAlreadyInUse, 409), (.emailExists, 409),
            (.migrationRequired(anonymousUid: "u"), 409), (.notDead, 409), (.anonymousAccount("x"), 409), (.tooManyAttempts(retryAfter: 3), 429),
            (.unavailable("x"), 503), (.internalError("x"), 500), (.hookDenied(message: "x"), 403), (.hookFailed, 503),
        ]
        for (error, status) in expected {
            #expect(error.httpStatus == status, "\(error.code)")
            #expect(APIErrorCode(rawValue: error.code)?.httpStatus == status, "\(error.code)")
        }
    }
}

/// An in-memory store that reports batch counts, as the PostgreSQL store does.
private final class BatchReportingStore: Store {
    let base: any Store
    init(_ base: any Store) { self.base = base }
    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) throws -> T { try base.read(body) }
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T { try base.write(body) }
    func writeSyncingLater<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws -> T {
        try base.writeSyncingLater(body)
    }
    var mailDoorbell: MailDoorbell { base.mailDoorbell }
    func exclusively<T>(_ lock: StoreLock, _ body: () throws -> T) throws -> T? { try base.exclusively(lock, body) }
    var writeBatches: WriteBatchCounts? { WriteBatchCounts(committed: 7, writes: 40, fellBack: 2) }
}
