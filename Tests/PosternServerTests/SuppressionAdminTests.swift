import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// `/v1/admin/suppressions`: one address's suppression, the list by pages with a cursor, and
/// lifting one (204, then 404 `NOT_FOUND`).
@Suite("The suppressions admin API")
struct SuppressionAdminTests {
    static let token = "suppressions-admin-test-token-0123456789"

    static func get(_ router: APIRouter, _ query: [String: String], bearer: String? = token) -> HTTPResponse {
        router.handle(RouterTests.request("GET", "/v1/admin/suppressions", query: query, bearer: bearer))
    }

    static func list(_ response: HTTPResponse) throws -> SuppressionListBody {
        try JSONDecoder().decode(SuppressionListBody.self, from: Data(response.body))
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    static func suppress(_ store: InMemoryStore, _ local: String, _ reason: SuppressionReason, at: Int64) throws {
        try store.write { try $0.suppress(EmailAddress.restored(localPart: local, domain: "example.com"), reason: reason.stored("5.1.1"), now: at) }
    }

    @Test("the API's reasons are Core's")
    func reasons() {
        #expect(SuppressionBody.reasons == SuppressionReason.allCases.map(\.rawValue))
    }

    @Test("?email= answers its one suppression (reason, time and detail) or none; DELETE lifts it with 204, then 404 NOT_FOUND")
    func oneAddress() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        try Self.suppress(h.store, "ann", .complaint, at: 1_738_324_800)
        let found = try Self.list(Self.get(h.router, ["email": "ANN@example.com"]))
        #expect(found == SuppressionListBody(
            suppressions: [SuppressionBody(email: "ann@example.com", reason: "complaint", suppressedAt: "2025-01-31T12:00:00Z", detail: "5.1.1")],
            nextCursor: nil))
        #expect(try Self.list(Self.get(h.router, ["email": "bob@example.com"])).suppressions.isEmpty)
        #expect(Self.text(Self.get(h.router, ["email": "not an address"])).contains("INVALID_EMAIL"))
        let removed = h.router.handle(RouterTests.request("DELETE", "/v1/admin/suppressions/Ann@example.com", bearer: Self.token))
        #expect(removed.status == 204)
        #expect(try h.store.read { try $0.isSuppressed(EmailAddress.restored(localPart: "ann", domain: "example.com")) } == false)
        let again = h.router.handle(RouterTests.request("DELETE", "/v1/admin/suppressions/ann@example.com", bearer: Self.token))
        #expect(again.status == 404 && Self.text(again).contains("NOT_FOUND"))
    }

    @Test("without email: newest first, limit and cursor page through every one once; a bad limit or cursor is 400")
    func pages() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        for (index, local) in ["a", "b", "c", "d", "e"].enumerated() { try Self.suppress(h.store, local, .bounce, at: 100 + Int64(index)) }
        let first = try Self.list(Self.get(h.router, ["limit": "2"]))
        #expect(first.suppressions.map(\.email) == ["e@example.com", "d@example.com"] && first.nextCursor != nil)
        let second = try Self.list(Self.get(h.router, ["limit": "2", "cursor": try #require(first.nextCursor)]))
        #expect(second.suppressions.map(\.email) == ["c@example.com", "b@example.com"] && second.nextCursor != nil)
        let last = try Self.list(Self.get(h.router, ["limit": "2", "cursor": try #require(second.nextCursor)]))
        #expect(last.suppressions.map(\.email) == ["a@example.com"] && last.nextCursor == nil)
        let all = try Self.list(Self.get(h.router, [:]))
        #expect(all.suppressions.count == 5 && all.nextCursor == nil && all.suppressions.allSatisfy { $0.reason == "bounce" })
        for query in [["limit": "0"], ["limit": "1001"], ["limit": "x"], ["cursor": "not-ours"], ["cursor": ""], ["email": "a@example.com", "limit": "true"]] {
            let refused = Self.get(h.router, query)
            #expect(refused.status == 400 && Self.text(refused).contains("INVALID_ARGUMENT"), "\(query)")
        }
        #expect(Self.get(h.router, [:], bearer: nil).status == 401, "the admin token")
    }
}
