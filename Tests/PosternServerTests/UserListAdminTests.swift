import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// `GET /v1/admin/users`: one user for `?email=` as before, else the list newest first by pages
/// (`query`, `cursor`, `limit`).
@Suite("The user list admin API")
struct UserListAdminTests {
    static let token = "users-admin-test-token-0123456789abcdef"

    static func get(_ router: APIRouter, _ query: [String: String], bearer: String? = token) -> HTTPResponse {
        router.handle(RouterTests.request("GET", "/v1/admin/users", query: query, bearer: bearer))
    }

    static func page(_ response: HTTPResponse) throws -> UserListBody {
        try JSONDecoder().decode(UserListBody.self, from: Data(response.body))
    }

    /// `text` as the cursors are written (base64url without padding): a forged cursor.
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The problems of `response` against alternative `index` of the documented answer (0: the
    /// one User of `email`, 1: a page), as `ContractTests` finds them.
    static func problems(_ response: HTTPResponse, alternative index: Int) throws -> [String] {
        let document = try ContractTests.document()
        let schema = try #require(document["paths"]?["/v1/admin/users"]?["get"]?["responses"]?["200"]?["content"]?["application/json"]?["schema"])
        let alternative = try #require(schema["anyOf"]?.arrayValue?.dropFirst(index).first)
        return ContractTests.problems(try APIJSON.decode(JSONValue.self, from: response.body), alternative, in: document, at: "users")
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// 25 accounts, five to a creation time (so pages cut through ties), and one anonymous.
    static func seeded() throws -> RouterTests.Harness {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        try h.store.write { tx in
            for index in 0..<25 {
                let uid = String(format: "u%02d", index)
                try tx.insertAccount(Account(uid: uid, email: try EmailAddress.parse("User\(uid)@example.com"), createdAt: 1_700_000_000 + Int64(index / 5)))
            }
            try tx.insertAccount(Account(uid: "anonymous-one", createdAt: 1_600_000_000))
        }
        return h
    }

    @Test("a walk by cursors collects every user once, newest first (ties by uid); nextCursor is null on the last page")
    func walk() throws {
        let h = try Self.seeded()
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            var query = ["limit": "7"]
            if let cursor { query["cursor"] = cursor }
            let response = Self.get(h.router, query)
            #expect(response.status == 200)
            let page = try Self.page(response)
            #expect(page.users.count <= 7)
            seen += page.users.map(\.uid)
            cursor = page.nextCursor
            pages += 1
            #expect(try Self.problems(response, alternative: 1) == [])
            if cursor == nil { #expect(Self.text(response).contains("\"nextCursor\":null")) }
        } while cursor != nil && pages < 10
        #expect(pages == 4)
        #expect(seen == (0..<25).reversed().map { String(format: "u%02d", $0) } + ["anonymous-one"])
        #expect(Set(seen).count == seen.count, "none twice")
        let all = try Self.page(Self.get(h.router, [:]))
        #expect(all.users.count == 26 && all.nextCursor == nil, "the default limit, 100, holds them all")
    }

    @Test("query: an address prefix (case-insensitive, % and _ literal) or an exact uid")
    func query() throws {
        let h = try Self.seeded()
        let prefixed = try Self.page(Self.get(h.router, ["query": "USERU0"]))
        #expect(prefixed.users.map(\.uid) == (0..<10).reversed().map { String(format: "u%02d", $0) })
        #expect(try Self.page(Self.get(h.router, ["query": "anonymous-one"])).users.map(\.uid) == ["anonymous-one"])
        #expect(try Self.page(Self.get(h.router, ["query": "%"])).users.isEmpty)
        #expect(try Self.page(Self.get(h.router, ["query": "user_"])).users.isEmpty)
    }

    @Test("?email= answers the one User as before (404 USER_NOT_FOUND when none holds it)")
    func email() throws {
        let h = try Self.seeded()
        let found = Self.get(h.router, ["email": "userU07@EXAMPLE.com"])
        #expect(found.status == 200)
        let user = try JSONDecoder().decode(UserBody.self, from: Data(found.body))
        #expect(user.uid == "u07" && !Self.text(found).contains("users"))
        #expect(try Self.problems(found, alternative: 0) == [])
        #expect(try Self.problems(found, alternative: 1) != [], "a User is no page")
        let missing = Self.get(h.router, ["email": "nobody@example.com"])
        #expect(missing.status == 404 && Self.text(missing).contains("USER_NOT_FOUND"))
    }

    @Test("a bad limit, cursor or query is 400 INVALID_ARGUMENT (never a 500); without the admin token 401")
    func refusals() throws {
        let h = try Self.seeded()
        let forged = Self.base64URL("notanumber u01")
        for query in [["limit": "0"], ["limit": "1001"], ["limit": "x"], ["cursor": "not-ours!"], ["cursor": ""], ["cursor": forged],
                      ["cursor": Self.base64URL("12")], ["query": ""], ["query": String(repeating: "a", count: 321)]] {
            let refused = Self.get(h.router, query)
            #expect(refused.status == 400 && Self.text(refused).contains("INVALID_ARGUMENT"), "\(query)")
        }
        #expect(Self.get(h.router, [:], bearer: nil).status == 401)
        #expect(Self.get(h.router, [:], bearer: "wrong-token-0123456789abcdef0123456789").status == 401)
    }
}
