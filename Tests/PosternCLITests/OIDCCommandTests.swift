import Foundation
import PosternAssembly
import PosternCore
@testable import PosternCLI
import Testing

/// `postern oidc clients …`: parsed with argument arrays, usage errors before anything is opened
/// (naming the option and the value at fault), what it prints, and a run over a SQLite file.
@Suite("postern oidc clients")
struct OIDCCommandTests {
    func usageError(_ arguments: [String]) -> String? { ParsedCommand.usageError(arguments) }

    func command(_ arguments: [String]) throws -> OIDCCommand { try ParsedCommand.command(arguments, as: OIDCCommand.self) }

    static let add = ["oidc", "clients", "add", "--name", "Grafana", "--redirect-uri", "https://grafana.example.com/login/generic_oauth"]

    @Test("each action parses; a repeated option keeps every value in order")
    func parses() throws {
        let added = try command(Self.add + [
            "--redirect-uri", "http://127.0.0.1/cb", "--first-party", "--post-logout-redirect-uri", "https://grafana.example.com/login",
            "--scope", "openid", "--scope=offline_access", "--json",
        ])
        let registration = added.registration
        #expect(registration.name == "Grafana" && registration.firstParty && !registration.isPublic && !registration.allowNoPKCE)
        #expect(registration.redirectURIs == ["https://grafana.example.com/login/generic_oauth", "http://127.0.0.1/cb"])
        #expect(registration.postLogoutRedirectURIs == ["https://grafana.example.com/login"])
        #expect(registration.scopes == ["openid", "offline_access"])
        #expect(try command(Self.add).registration.scopes == nil, "the defaults")
        #expect(try command(Self.add).registration.idTokenSignedResponseAlg == nil)
        #expect(try command(Self.add + ["--id-token-alg", "RS256"]).registration.signingAlgorithm == .rs256)
        let open = try command(["oidc", "clients", "add", "--name", "Notes", "--redirect-uri", "com.example.notes:/cb", "--public"])
        #expect(open.registration.isPublic)
        for arguments in [["oidc", "clients", "list", "--json"], ["oidc", "clients", "remove", "abc"], ["oidc", "clients", "rotate-secret", "abc"]] {
            #expect(throws: Never.self, "\(arguments)") { _ = try command(arguments) }
        }
    }

    @Test("usage errors name what to fix, and the option and value at fault", arguments: [
        (["oidc"], "oidc needs clients add, list, remove or rotate-secret"),
        (["oidc", "clients"], "oidc needs clients add"),
        (["oidc", "clients", "show"], "oidc needs clients add"),
        (["oidc", "client", "list"], "oidc needs clients add"),
        (["oidc", "clients", "list", "extra"], "oidc clients list takes no argument"),
        (["oidc", "clients", "remove"], "oidc clients remove needs one CLIENT_ID"),
        (["oidc", "clients", "rotate-secret", "a", "b"], "oidc clients rotate-secret needs one CLIENT_ID"),
        (["oidc", "clients", "add", "--redirect-uri", "https://a.example/cb"], "oidc clients add needs --name NAME"),
        (["oidc", "clients", "add", "--name", "A"], "needs at least one --redirect-uri URI"),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "https://a.example/cb", "--redirect-uri", "http://a.example/cb"],
         #"--redirect-uri "http://a.example/cb": http only on a loopback"#),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "http://localhost:8080/cb", "--public"], #"--redirect-uri "http://localhost:8080/cb""#),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "https://a.example/cb", "--post-logout-redirect-uri", "https://a.example/#x"],
         #"--post-logout-redirect-uri "https://a.example/#x": must not have a fragment"#),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "https://a.example/cb", "--scope", "openid", "--scope", "admin"],
         #"--scope "admin": "admin" is not one of"#),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "https://a.example/cb", "--public", "--allow-no-pkce"],
         "--allow-no-pkce: is for confidential clients only"),
        (["oidc", "clients", "add", "--name", "", "--redirect-uri", "https://a.example/cb"], "--name: must be 1 to 256"),
        (["oidc", "clients", "add", "--name", "A", "--redirect-uri", "https://a.example/cb", "--id-token-alg", "HS256"],
         "--id-token-alg: must be ES256 or RS256"),
        (["oidc", "clients", "list", "--id-token-alg", "RS256"], "--id-token-alg is for oidc clients add"),
        (["oidc", "clients", "list", "--public"], "--public is for oidc clients add"),
        (["oidc", "clients", "remove", "x", "--name", "A"], "--name is for oidc clients add"),
        (["oidc", "clients", "list", "--events", "*"], "--events is an option of `postern webhooks`, not of `postern oidc clients`"),
    ])
    func usage(arguments: [String], says: String) {
        let message = usageError(arguments)
        #expect(message?.contains(says) == true, "\(arguments): \(message ?? "accepted")")
    }

    @Test("--help explains the actions, the URI rules and that the secret is shown once")
    func help() throws {
        guard case .help(let text) = try Invocation.parse(["oidc", "--help"]) else {
            Issue.record("not help")
            return
        }
        for part in [
            "postern oidc clients add --name NAME --redirect-uri URI", "postern oidc clients rotate-secret CLIENT_ID", "shown this",
            "localhost is refused", "--allow-no-pkce", "--post-logout-redirect-uri URI", "--database", "--master-key-file",
        ] {
            #expect(text.contains(part), "\(part)")
        }
    }

    @Test("add prints the client id and the secret once (with --json, the admin API's body); list never prints a secret")
    func output() throws {
        let secret = "c2VjcmV0LWV4YW1wbGUtZG8tbm90LXVzZS0wMTIzNDU"
        let client = OIDCClient(
            clientID: "Q2xpZW50SWRFeGFtcGxlMQ", name: "Grafana", authentication: .secretHash(OIDCClient.secretHash(of: secret)),
            redirectURIs: ["https://grafana.example.com/cb"], firstParty: true, createdAt: 1_700_000_000)
        let text = OIDCCommand.describe(OIDCClientCredentials(client: client, secret: secret), json: false)
        #expect(text.contains("client_id: Q2xpZW50SWRFeGFtcGxlMQ") && text.contains("client_secret: \(secret)") && text.contains("shown this once"))
        #expect(text.components(separatedBy: secret).count == 2, "the secret once")
        let json = OIDCCommand.describe(OIDCClientCredentials(client: client, secret: secret), json: true)
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["clientSecret"] as? String == secret && (object["client"] as? [String: Any])?["clientId"] as? String == client.clientID)
        let publicText = OIDCCommand.describe(
            OIDCClientCredentials(client: OIDCClient(clientID: "n", name: "Notes", authentication: .publicClient, redirectURIs: ["com.example.n:/cb"]), secret: nil),
            json: false)
        #expect(publicText.contains("public") && !publicText.contains("client_secret"))
        for listed in [OIDCCommand.describe([client], json: false), OIDCCommand.describe([client], json: true)] {
            #expect(listed.contains(client.clientID) && !listed.contains(secret) && !listed.contains("clientSecret"))
        }
        let rs256 = OIDCClient(
            clientID: "r", name: "Legacy", authentication: .publicClient, redirectURIs: ["com.example.r:/cb"], idTokenSignedResponseAlg: .rs256)
        #expect(OIDCCommand.line(rs256).contains("public,RS256") && !OIDCCommand.line(client).contains("256"))
        #expect(OIDCCommand.describe([rs256], json: true).contains(#""idTokenSignedResponseAlg":"RS256""#))
        #expect(OIDCCommand.describe([], json: false) == "no OpenID Connect clients")
        #expect(OIDCCommand.describe([], json: true) == #"{"clients":[]}"#)
    }

    @Test("run over a SQLite file: add stores the client (its secret only hashed), rotate-secret and remove change it, an unknown id exits 65")
    func runs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-oidc-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = ["--database", directory.appendingPathComponent("postern.db").path]
        var settings = Settings()
        settings.database = database[1]
        func stored() throws -> [OIDCClient] {
            let storage = try PosternStorage(settings: settings)
            defer { storage.store.close() }
            return try storage.store.read { try $0.oidcClients() }
        }
        #expect(try command(Self.add + ["--scope", "openid", "--scope", "email"] + database).run() == 0)
        let client = try #require(try stored().first)
        #expect(client.name == "Grafana" && client.scopes == ["openid", "email"] && !client.isPublic)
        #expect(try command(["oidc", "clients", "list"] + database).run() == 0)
        #expect(client.idTokenSignedResponseAlg == .es256, "the default")
        #expect(try command(["oidc", "clients", "rotate-secret", client.clientID] + database).run() == 0)
        #expect(try stored().first?.authentication != client.authentication, "a new secret's hash")
        #expect(try command(Self.add + ["--id-token-alg", "RS256"] + database).run() == 0)
        let rs256 = try stored().filter { $0.idTokenSignedResponseAlg == .rs256 }
        #expect(rs256.count == 1 && rs256.first?.clientID != client.clientID)
        #expect(try command(["oidc", "clients", "remove", try #require(rs256.first).clientID] + database).run() == 0)
        #expect(try command(["oidc", "clients", "remove", client.clientID] + database).run() == 0)
        #expect(try stored().isEmpty)
        let unknown = #expect(throws: CommandFailure.self) { try command(["oidc", "clients", "remove", client.clientID] + database).run() }
        #expect(unknown?.code == .badInput && unknown?.message.contains("no OpenID Connect client") == true)
    }
}
