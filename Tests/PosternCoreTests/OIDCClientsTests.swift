import Foundation
import PosternAPI
import PosternCore
import Testing

/// `--oidc-clients FILE`: what a client entry accepts, the sentence each wrong field gets (naming
/// the client and the field, never a secret), and how a redirect URI is matched.
@Suite("OIDC clients file")
struct OIDCClientsTests {
    static let secret = "k3Y9-a-secret-only-the-relying-party-knows"
    static let hash = OIDCClient.secretHash(of: secret)

    static func load(_ text: String) throws(SettingsError) -> OIDCClients { try OIDCClients.load(Data(text.utf8)) }

    /// The file with one client whose fields are `fields` (a JSON object's members).
    static func one(_ fields: String) -> String { #"{"clients": [{"clientId": "grafana", \#(fields)}]}"# }

    static let confidential = #""secretHash": "\#(hash)", "redirectUris": ["https://grafana.example.com/login/generic_oauth"]"#

    @Test("a confidential and a public client parse with their defaults; the secret is held only as its hash")
    func parses() throws {
        let clients = try Self.load(#"""
            {"clients": [
              {"clientId": "grafana", "name": "Grafana", "secretHash": "\#(Self.hash)",
               "redirectUris": ["https://grafana.example.com/login/generic_oauth"],
               "postLogoutRedirectUris": ["https://grafana.example.com/login"],
               "scopes": ["openid", "email", "offline_access", "email"], "firstParty": true, "allowNoPkce": true},
              {"clientId": "notes-spa", "public": true,
               "redirectUris": ["https://notes.example.com/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "com.example.notes:/cb"]}
            ]}
            """#)
        let grafana = try #require(clients.client(id: "grafana"))
        #expect(grafana.name == "Grafana" && !grafana.isPublic && grafana.firstParty && grafana.allowNoPKCE)
        #expect(grafana.scopes == ["openid", "email", "offline_access"])
        #expect(grafana.postLogoutRedirectURIs == ["https://grafana.example.com/login"])
        #expect(grafana.acceptsSecret(Self.secret))
        #expect(!grafana.acceptsSecret(Self.secret + "x") && !grafana.acceptsSecret(""))
        #expect(!"\(grafana)".contains(Self.secret))
        let notes = try #require(clients.client(id: "notes-spa"))
        #expect(notes.isPublic && notes.name == "notes-spa" && !notes.firstParty && !notes.allowNoPKCE)
        #expect(notes.scopes == OIDCClient.defaultScopes && notes.postLogoutRedirectURIs.isEmpty)
        #expect(!notes.acceptsSecret(""))
        #expect(clients.client(id: "Grafana") == nil)
    }

    @Test("each bad input is refused with a sentence naming the client and the field", arguments: [
        ("not json", "not JSON"),
        (#"[]"#, "JSON object"),
        (#"{"clients": [], "extra": 1}"#, #"unknown field "extra""#),
        (#"{"clients": {}}"#, "must be an array"),
        (#"{"clients": []}"#, "is empty"),
        (#"{"clients": [1]}"#, "clients[0] must be an object"),
        (#"{"clients": [{"redirectUris": []}]}"#, "clientId is missing"),
        (#"{"clients": [{"clientId": "a b", "public": true}]}"#, "clientId must be 1 to 128"),
        (#"{"clients": [{"clientId": "", "public": true}]}"#, "clientId must be 1 to 128"),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "redirectUri": "x""#), #"clients[0] ("grafana"): unknown field "redirectUri""#),
        (one(#""secret": "hunter2hunter2", "redirectUris": ["https://a.example/cb"]"#), "holds only secretHash"),
        (one(#""redirectUris": ["https://a.example/cb"]"#), "give secretHash"),
        (one(#""public": true, "secretHash": "\#(hash)", "redirectUris": ["https://a.example/cb"]"#), "no secretHash"),
        (one(#""secretHash": "sha256:short", "redirectUris": ["https://a.example/cb"]"#), "secretHash must be"),
        (one(#""secretHash": "$scrypt$ln=15,r=8,p=1$abc$def", "redirectUris": ["https://a.example/cb"]"#), "secretHash must be"),
        (one(#""public": "yes", "redirectUris": ["https://a.example/cb"]"#), "public must be true or false"),
        (one(#""public": 1, "redirectUris": ["https://a.example/cb"]"#), "public must be true or false"),
        (one(#""public": true"#), "redirectUris needs at least one"),
        (one(#""public": true, "redirectUris": "https://a.example/cb""#), "redirectUris must be an array"),
        (one(#""public": true, "redirectUris": [3]"#), "redirectUris[0] must be a string"),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "scopes": ["openid", "admin"]"#), #"scopes: "admin" is not one of"#),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "scopes": ["email"]"#), "scopes must include openid"),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "allowNoPkce": true"#), "allowNoPkce is for confidential clients only"),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "name": """#), "name must be"),
        (one(#""public": true, "redirectUris": ["https://a.example/cb"], "postLogoutRedirectUris": ["http://a.example/"]"#), "postLogoutRedirectUris[0]"),
        (#"{"clients": [{"clientId": "a", "public": true, "redirectUris": ["https://a.example/cb"]}, {"clientId": "a", "public": true, "redirectUris": ["https://b.example/cb"]}]}"#, #"clients[1]: clientId "a" is registered twice"#),
    ])
    func refused(file: String, expected: String) {
        #expect {
            try Self.load(file)
        } throws: { error in
            let message = "\(error)"
            return message.hasPrefix("--oidc-clients: ") && message.contains(expected) && !message.contains(Self.hash)
                && !message.contains("hunter2")
        }
    }

    @Test("a redirect URI that cannot be registered is refused, saying why", arguments: [
        ("https://a.example/cb#frag", false, "fragment"),
        ("https://user@a.example/cb", false, "user information"),
        ("https://a.example@evil.example/cb", false, "user information"),
        ("https://a%2eexample/cb", false, "percent-encoded"),
        ("https:///cb", false, "needs a host"),
        ("https://a.example:99999/cb", false, "host must be"),
        ("https://a.example:/cb", false, "host must be"),
        ("https://a exa.example/cb", false, "printable ASCII"),
        ("https://a.example/c\u{7F}b", false, "printable ASCII"),
        ("https://a.example\\@evil.example/", false, "backslash"),
        ("HTTPS://a.example/cb", false, "lower-case"),
        ("/relative/cb", false, "absolute"),
        ("https:a.example/cb", false, "https://host"),
        ("http://a.example/cb", false, "loopback"),
        ("http://localhost:8080/cb", true, "loopback"),
        ("http://127.0.0.1.evil.example/cb", true, "loopback"),
        ("http://127.0.0.1:80800/cb", true, "loopback"),
        ("com.example.app:/cb", false, "confidential client"),
        ("myapp:/cb", true, "with a dot"),
        ("com.example.app://cb", true, "one slash"),
        ("javascript:alert(1)", true, "with a dot"),
    ])
    func redirectURIRefused(uri: String, publicClient: Bool, expected: String) {
        let fields = publicClient ? #""public": true"# : #""secretHash": "\#(Self.hash)""#
        let json = try? String(decoding: JSONEncoder().encode(JSONValue.string(uri)), as: UTF8.self)
        #expect {
            try Self.load(Self.one(#"\#(fields), "redirectUris": [\#(json ?? "")]"#))
        } throws: { error in
            "\(error)".contains("redirectUris[0]") && "\(error)".contains(expected)
        }
    }

    @Test("the example file in docs/oidc.md parses: a confidential and a public client")
    func documentedExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/oidc.md"), encoding: .utf8)
        let block = try #require(page.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let clients = try OIDCClients.load(Data(block.utf8))
        #expect(clients.clients.map(\.clientID) == ["grafana", "notes-spa"])
        #expect(clients.client(id: "grafana")?.acceptsSecret("example-secret-do-not-use") == true)
        #expect(clients.client(id: "notes-spa")?.isPublic == true)
    }

    @Test("redirect URIs match exactly; a loopback one on any port, and only on its own path")
    func matching() throws {
        let clients = try Self.load(Self.one(#"""
            "public": true, "redirectUris": ["https://app.example.com/cb", "http://127.0.0.1/cb", "http://[::1]:3000/native?x=1"],
            "postLogoutRedirectUris": ["https://app.example.com/bye"]
            """#))
        let client = try #require(clients.client(id: "grafana"))
        #expect(client.redirectURIMatches("https://app.example.com/cb"))
        for attack in [
            "https://app.example.com/cb/", "https://app.example.com/cb/../evil", "https://app.example.com/c", "https://app.example.com/cbx",
            "https://app.example.com/cb?x=1", "https://app.example.com/cb#x", "https://APP.example.com/cb", "https://app.example.com/CB",
            "https://app.example.com%2fcb", "https://app.example.com/%63b", "https://app.example.com:443/cb", "https://app.example.com:8443/cb",
            "https://evil@app.example.com/cb", "https://app.example.com@evil.example/cb", "https://app.example.com.evil.example/cb",
            "http://app.example.com/cb", "https://evil.example/https://app.example.com/cb", " https://app.example.com/cb", "",
        ] {
            #expect(!client.redirectURIMatches(attack), "\(attack)")
        }
        #expect(client.redirectURIMatches("http://127.0.0.1/cb"))
        #expect(client.redirectURIMatches("http://127.0.0.1:51234/cb"))
        #expect(client.redirectURIMatches("http://[::1]/native?x=1") && client.redirectURIMatches("http://[::1]:1/native?x=1"))
        for attack in [
            "http://127.0.0.1:51234/cb/x", "http://127.0.0.1:51234/other", "http://127.0.0.1:/cb", "http://127.0.0.1:99999/cb",
            "http://127.0.0.1.evil.example/cb", "http://127.0.0.1@evil.example/cb", "http://localhost:51234/cb", "https://127.0.0.1:51234/cb",
            "http://[::1]:1/native", "http://127.0.0.1:51234/native?x=1",
        ] {
            #expect(!client.redirectURIMatches(attack), "\(attack)")
        }
        #expect(client.postLogoutRedirectURIMatches("https://app.example.com/bye"))
        #expect(!client.postLogoutRedirectURIMatches("https://app.example.com/cb") && !client.postLogoutRedirectURIMatches("https://app.example.com/bye/"))
    }
}
