import Foundation
import PosternCore
import Testing

/// What a client registration accepts (`postern oidc clients add`, `POST /v1/admin/oidc/clients`),
/// the error each wrong field gets (naming the field and the entry), and how a redirect URI is
/// matched.
@Suite("OIDC client registration")
struct OIDCClientRegistrationTests {
    static let secret = "k3Y9-a-secret-only-the-relying-party-knows"

    static func registration(
        redirectURIs: [String] = ["https://grafana.example.com/login/generic_oauth"], isPublic: Bool = false,
        postLogoutRedirectURIs: [String] = [], allowNoPKCE: Bool = false, scopes: [String]? = nil, name: String = "Grafana",
        idTokenSignedResponseAlg: String? = nil
    ) -> OIDCClientRegistration {
        OIDCClientRegistration(
            name: name, redirectURIs: redirectURIs, isPublic: isPublic, postLogoutRedirectURIs: postLogoutRedirectURIs,
            allowNoPKCE: allowNoPKCE, scopes: scopes, idTokenSignedResponseAlg: idTokenSignedResponseAlg)
    }

    /// A client as registered (checked), with the id `clientID`.
    static func client(_ registration: OIDCClientRegistration, id clientID: String = "grafana") throws -> OIDCClient {
        let checked = try registration.validated()
        return OIDCClient(
            clientID: clientID, name: checked.name,
            authentication: checked.isPublic ? .publicClient : .secretHash(OIDCClient.secretHash(of: secret)),
            redirectURIs: checked.redirectURIs, postLogoutRedirectURIs: checked.postLogoutRedirectURIs,
            scopes: checked.scopes ?? [], firstParty: checked.firstParty, allowNoPKCE: checked.allowNoPKCE)
    }

    @Test("a confidential and a public registration pass with their defaults; scopes kept once each, in order")
    func passes() throws {
        let grafana = try OIDCClientRegistration(
            name: "Grafana", redirectURIs: ["https://grafana.example.com/login/generic_oauth"], firstParty: true,
            postLogoutRedirectURIs: ["https://grafana.example.com/login"], allowNoPKCE: true,
            scopes: ["openid", "email", "offline_access", "email"]
        ).validated()
        #expect(grafana.scopes == ["openid", "email", "offline_access"] && grafana.firstParty && grafana.allowNoPKCE)
        #expect(grafana.postLogoutRedirectURIs == ["https://grafana.example.com/login"])
        let notes = try Self.registration(
            redirectURIs: ["https://notes.example.com/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "com.example.notes:/cb"],
            isPublic: true, name: "Notes"
        ).validated()
        #expect(notes.isPublic && notes.scopes == OIDCClient.defaultScopes && notes.postLogoutRedirectURIs.isEmpty && !notes.allowNoPKCE)
        let client = try Self.client(grafana)
        #expect(client.acceptsSecret(Self.secret))
        #expect(!client.acceptsSecret(Self.secret + "x") && !client.acceptsSecret(""))
        #expect(!"\(client)".contains(Self.secret))
        #expect(!(try Self.client(notes)).acceptsSecret(""))
        // openid is every client's: added first when the list leaves it out (an empty list too).
        #expect(try Self.registration(scopes: ["email", "offline_access"]).validated().scopes == ["openid", "email", "offline_access"])
        #expect(try Self.registration(scopes: []).validated().scopes == ["openid"])
    }

    @Test("the signing algorithm: ES256 when none is named, else the one named, for a public client too")
    func signingAlgorithm() throws {
        #expect(try Self.registration().validated().signingAlgorithm == .es256)
        #expect(try Self.registration(idTokenSignedResponseAlg: "ES256").validated().signingAlgorithm == .es256)
        #expect(try Self.registration(idTokenSignedResponseAlg: "RS256").validated().signingAlgorithm == .rs256)
        #expect(
            try Self.registration(redirectURIs: ["com.example.notes:/cb"], isPublic: true, idTokenSignedResponseAlg: "RS256").validated()
                .signingAlgorithm == .rs256)
        #expect(Self.registration(idTokenSignedResponseAlg: "HS256").signingAlgorithm == nil)
    }

    @Test("each bad field is refused with an error naming it (and the entry of a list)", arguments: [
        (registration(name: ""), "name: must be 1 to 256"),
        (registration(name: String(repeating: "n", count: 257)), "name: must be 1 to 256"),
        (registration(name: "two\nlines"), "name: must be 1 to 256"),
        (registration(redirectURIs: []), "redirectUris: needs at least one URI"),
        (registration(redirectURIs: Array(repeating: "https://a.example/cb", count: 51)), "redirectUris: holds more than 50"),
        (registration(redirectURIs: ["https://a.example/cb", "http://a.example/cb"]), "redirectUris[1]: http only on a loopback"),
        (registration(postLogoutRedirectURIs: ["http://a.example/"]), "postLogoutRedirectUris[0]: http only on a loopback"),
        (registration(postLogoutRedirectURIs: ["https://a.example/bye#x"]), "postLogoutRedirectUris[0]: must not have a fragment"),
        (registration(scopes: ["openid", "admin"]), #"scopes[1]: "admin" is not one of openid, email, profile, offline_access"#),
        (registration(isPublic: true, allowNoPKCE: true), "allowNoPkce: is for confidential clients only"),
        (registration(idTokenSignedResponseAlg: "HS256"), "idTokenSignedResponseAlg: must be ES256 or RS256"),
        (registration(idTokenSignedResponseAlg: "rs256"), "idTokenSignedResponseAlg: must be ES256 or RS256"),
        (registration(idTokenSignedResponseAlg: "none"), "idTokenSignedResponseAlg: must be ES256 or RS256"),
        (registration(idTokenSignedResponseAlg: ""), "idTokenSignedResponseAlg: must be ES256 or RS256"),
    ])
    func refused(registration: OIDCClientRegistration, expected: String) {
        #expect {
            try registration.validated()
        } throws: { error in
            "\(error)".hasPrefix(expected)
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
        ("https://a.example/" + String(repeating: "x", count: 2_000), false, "longer than 2000 bytes"),
    ])
    func redirectURIRefused(uri: String, publicClient: Bool, expected: String) {
        #expect {
            try Self.registration(redirectURIs: [uri], isPublic: publicClient).validated()
        } throws: { error in
            guard let error = error as? OIDCClientRegistrationError else { return false }
            return error.field == .redirectURIs && error.index == 0 && error.reason.contains(expected)
        }
    }

    @Test("redirect URIs match exactly; a loopback one on any port, and only on its own path")
    func matching() throws {
        let client = try Self.client(Self.registration(
            redirectURIs: ["https://app.example.com/cb", "http://127.0.0.1/cb", "http://[::1]:3000/native?x=1"], isPublic: true,
            postLogoutRedirectURIs: ["https://app.example.com/bye"]))
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
