import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
@testable import PosternServer
@testable import PosternStore
import PosternTestSupport
import Testing

/// `/v1/admin/oidc/clients`: register, list, rotate and remove OpenID Connect clients over the
/// router; a secret is answered once, never listed, logged or stored in the clear.
@Suite("The OIDC clients admin API")
struct OIDCClientAdminTests {
    static let token = "oidc-admin-test-token-0123456789abcdef"
    static let grafana = #"""
        {"name": "Grafana", "redirectUris": ["https://grafana.example.com/login/generic_oauth"], "firstParty": true,
         "postLogoutRedirectUris": ["https://grafana.example.com/login"], "scopes": ["openid", "email", "offline_access"]}
        """#

    static func send(_ router: APIRouter, _ method: String, _ path: String, body: String? = nil, bearer: String? = token) -> HTTPResponse {
        router.handle(RouterTests.request(method, path, body: body, bearer: bearer))
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    static func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        try JSONDecoder().decode(type, from: Data(response.body))
    }

    @Test("a confidential client: 201 with its secret once; GET lists it without; rotate gives a new one; DELETE 204 then 404")
    func lifecycle() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        let created = Self.send(h.router, "POST", "/v1/admin/oidc/clients", body: Self.grafana)
        #expect(created.status == 201)
        let added = try Self.decode(OIDCClientSecretBody.self, created)
        let secret = try #require(added.clientSecret)
        #expect(secret.count == 43 && Base64URL.decode(Substring(secret))?.count == 32)
        #expect(added.client.name == "Grafana" && !added.client.public && added.client.firstParty && !added.client.allowNoPkce)
        #expect(added.client.redirectUris == ["https://grafana.example.com/login/generic_oauth"])
        #expect(added.client.postLogoutRedirectUris == ["https://grafana.example.com/login"])
        #expect(added.client.scopes == ["openid", "email", "offline_access"] && added.client.createdAt.hasSuffix("Z"))
        #expect(added.client.idTokenSignedResponseAlg == "ES256", "the default")
        let id = added.client.clientId
        // The stored client takes the secret it was answered with.
        #expect(try h.service.oidcClients.client(id: id)?.acceptsSecret(secret) == true)
        for _ in 0..<2 {
            let listed = Self.send(h.router, "GET", "/v1/admin/oidc/clients")
            #expect(listed.status == 200 && !Self.text(listed).contains(secret) && !Self.text(listed).contains("clientSecret"))
            #expect(try Self.decode(OIDCClientListBody.self, listed).clients == [added.client])
        }
        let rotatedAnswer = Self.send(h.router, "POST", "/v1/admin/oidc/clients/\(id)/rotate-secret", body: "{}")
        #expect(rotatedAnswer.status == 200)
        let rotated = try Self.decode(OIDCClientSecretBody.self, rotatedAnswer)
        let newSecret = try #require(rotated.clientSecret)
        #expect(newSecret != secret && rotated.client == added.client)
        let stored = try #require(try h.service.oidcClients.client(id: id))
        #expect(stored.acceptsSecret(newSecret) && !stored.acceptsSecret(secret))
        let listedAgain = Self.text(Self.send(h.router, "GET", "/v1/admin/oidc/clients"))
        #expect(!listedAgain.contains(secret) && !listedAgain.contains(newSecret))
        #expect(Self.send(h.router, "DELETE", "/v1/admin/oidc/clients/\(id)").status == 204)
        let again = Self.send(h.router, "DELETE", "/v1/admin/oidc/clients/\(id)")
        #expect(again.status == 404 && RouterTests.errorCode(again) == "NOT_FOUND")
        let rotateGone = Self.send(h.router, "POST", "/v1/admin/oidc/clients/\(id)/rotate-secret", body: "{}")
        #expect(rotateGone.status == 404 && RouterTests.errorCode(rotateGone) == "NOT_FOUND")
        #expect(try Self.decode(OIDCClientListBody.self, Self.send(h.router, "GET", "/v1/admin/oidc/clients")).clients.isEmpty)
    }

    @Test("a public client is answered without clientSecret, with the default scopes, and has no secret to rotate")
    func publicClient() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        let created = Self.send(
            h.router, "POST", "/v1/admin/oidc/clients",
            body: #"{"name": "Notes", "public": true, "redirectUris": ["com.example.notes:/cb", "http://127.0.0.1/cb"]}"#)
        #expect(created.status == 201)
        #expect((RouterTests.json(created)["client"] as? [String: Any]) != nil && RouterTests.json(created)["clientSecret"] == nil)
        let client = try Self.decode(OIDCClientSecretBody.self, created).client
        #expect(client.public && client.scopes == ["openid", "email", "profile"] && client.postLogoutRedirectUris.isEmpty)
        let rotate = Self.send(h.router, "POST", "/v1/admin/oidc/clients/\(client.clientId)/rotate-secret", body: "{}")
        #expect(rotate.status == 400 && RouterTests.errorCode(rotate) == "INVALID_ARGUMENT")
    }

    @Test("a client registered for RS256 is answered and listed with it, and keeps it through a secret's rotation")
    func rs256Client() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        let created = Self.send(
            h.router, "POST", "/v1/admin/oidc/clients",
            body: #"{"name": "Legacy", "redirectUris": ["https://legacy.example.com/cb"], "idTokenSignedResponseAlg": "RS256"}"#)
        #expect(created.status == 201)
        let client = try Self.decode(OIDCClientSecretBody.self, created).client
        #expect(client.idTokenSignedResponseAlg == "RS256")
        #expect(try h.service.oidcClients.client(id: client.clientId)?.idTokenSignedResponseAlg == .rs256)
        let rotated = Self.send(h.router, "POST", "/v1/admin/oidc/clients/\(client.clientId)/rotate-secret", body: "{}")
        #expect(try Self.decode(OIDCClientSecretBody.self, rotated).client.idTokenSignedResponseAlg == "RS256")
        #expect(try Self.decode(OIDCClientListBody.self, Self.send(h.router, "GET", "/v1/admin/oidc/clients")).clients == [client])
    }

    @Test("bad input is 400 INVALID_ARGUMENT naming the field, and nothing is registered", arguments: [
        (#"{"redirectUris": ["https://a.example/cb"]}"#, "name is required."),
        (#"{"name": "A"}"#, "redirectUris is required."),
        (#"{"name": "A", "redirectUris": []}"#, "redirectUris: needs at least one URI"),
        (#"{"name": "A", "redirectUris": "https://a.example/cb"}"#, "redirectUris"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb", "http://a.example/cb"]}"#, "redirectUris[1]: http only on a loopback"),
        (#"{"name": "A", "redirectUris": ["http://localhost:8080/cb"], "public": true}"#, "redirectUris[0]: http only on a loopback"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb#x"]}"#, "redirectUris[0]: must not have a fragment"),
        (#"{"name": "A", "redirectUris": ["https://evil@a.example/cb"]}"#, "redirectUris[0]: must not carry user information"),
        (#"{"name": "A", "redirectUris": ["com.example.app:/cb"]}"#, "redirectUris[0]: a confidential client's redirect URI must be https"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "postLogoutRedirectUris": ["http://a.example/"]}"#, "postLogoutRedirectUris[0]:"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "scopes": ["openid", "admin"]}"#, #"scopes[1]: "admin" is not one of"#),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "public": true, "allowNoPkce": true}"#, "allowNoPkce: is for confidential clients only"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "public": "yes"}"#, "public must be true or false."),
        (#"{"name": "", "redirectUris": ["https://a.example/cb"]}"#, "name: must be 1 to 256"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "idTokenSignedResponseAlg": "HS256"}"#,
         "idTokenSignedResponseAlg: must be ES256 or RS256"),
        (#"{"name": "A", "redirectUris": ["https://a.example/cb"], "idTokenSignedResponseAlg": "none"}"#,
         "idTokenSignedResponseAlg: must be ES256 or RS256"),
    ])
    func refused(body: String, expected: String) throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        let answer = Self.send(h.router, "POST", "/v1/admin/oidc/clients", body: body)
        let message = (RouterTests.json(answer)["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(answer.status == 400 && RouterTests.errorCode(answer) == "INVALID_ARGUMENT")
        #expect(message.hasPrefix(expected), "\(message)")
        #expect(try h.service.oidcClients.list().isEmpty)
    }

    @Test("every route needs the admin token")
    func adminOnly() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        for (method, path, body) in [
            ("GET", "/v1/admin/oidc/clients", nil), ("POST", "/v1/admin/oidc/clients", Self.grafana),
            ("DELETE", "/v1/admin/oidc/clients/x", nil), ("POST", "/v1/admin/oidc/clients/x/rotate-secret", "{}"),
        ] as [(String, String, String?)] {
            #expect(Self.send(h.router, method, path, body: body, bearer: nil).status == 401, "\(method) \(path)")
            #expect(Self.send(h.router, method, path, body: body, bearer: Self.token + "x").status == 401, "\(method) \(path)")
        }
        #expect(try h.service.oidcClients.list().isEmpty)
    }

    @Test("over SQLite the secrets are in no file of the database and no log line; the table holds their SHA-256")
    func secretNowhereInTheClear() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-oidc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("postern.db").path)
        let built = try RouterTests.router(over: store, keysIn: store, adminToken: Self.token)
        let added = try Self.decode(OIDCClientSecretBody.self, Self.send(built.router, "POST", "/v1/admin/oidc/clients", body: Self.grafana))
        let rotated = try Self.decode(
            OIDCClientSecretBody.self, Self.send(built.router, "POST", "/v1/admin/oidc/clients/\(added.client.clientId)/rotate-secret", body: "{}"))
        let secrets = [try #require(added.clientSecret), try #require(rotated.clientSecret)]
        // The table, as the store reads it back: the current secret's SHA-256.
        let row = try #require(try store.read { try $0.oidcClient(id: added.client.clientId) })
        #expect(row.authentication == .secretHash(SHA256.hash(Array(secrets[1].utf8))))
        store.close()
        var bytes = Data()
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            bytes += try Data(contentsOf: directory.appendingPathComponent(file))
        }
        #expect(bytes.count > 4096)
        // The client's id is there (the search works); neither secret is, as text or as its 32 bytes.
        #expect(Self.contains(bytes, Array(added.client.clientId.utf8)))
        for secret in secrets {
            #expect(!Self.contains(bytes, Array(secret.utf8)))
            #expect(!Self.contains(bytes, try #require(Base64URL.decode(Substring(secret)))))
        }
        let log = built.log().joined(separator: "\n")
        for secret in secrets { #expect(!log.contains(secret)) }
    }

    static func contains(_ haystack: Data, _ needle: [UInt8]) -> Bool { !needle.isEmpty && haystack.range(of: Data(needle)) != nil }
}
