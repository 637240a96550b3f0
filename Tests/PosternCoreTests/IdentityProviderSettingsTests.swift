import Foundation
import PosternCore
import Testing

@Suite("--identity-providers: the providers file")
struct IdentityProviderSettingsTests {
    private func parse(_ json: String) throws(SettingsError) -> [IdentityProvider] {
        try IdentityProvider.parseList(Data(json.utf8))
    }

    @Test("apple and google get their issuers and keys by default; another provider keeps what the file says")
    func defaults() throws {
        let providers = try parse(
            """
            [{"id": "apple", "audiences": ["com.example.app", "com.example.web"]},
             {"id": "google", "audiences": ["123.apps.googleusercontent.com"], "clientId": "123.apps.googleusercontent.com",
              "clientSecretFile": "/run/secrets/google"},
             {"id": "corp", "issuer": "https://127.0.0.1:8443/", "audiences": ["postern"], "jwksUri": "https://127.0.0.1:8443/jwks"}]
            """)
        #expect(providers.map(\.id) == ["apple", "google", "corp"])
        #expect(providers[0].kind == .apple && providers[0].issuers == ["https://appleid.apple.com"])
        #expect(providers[0].jwksURI == "https://appleid.apple.com/auth/keys" && providers[0].audiences == ["com.example.app", "com.example.web"])
        #expect(providers[1].issuers == ["https://accounts.google.com", "accounts.google.com"])
        #expect(providers[1].jwksURI == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(providers[1].clientID == "123.apps.googleusercontent.com" && providers[1].clientSecretFile == "/run/secrets/google")
        #expect(providers[2].kind == .openID && providers[2].issuers == ["https://127.0.0.1:8443/"])
        #expect(providers.map(\.accountProviderName) == ["apple", "google", "oidc:corp"])
        // The issuer given overrides the default: that is how tests point Apple at loopback.
        let apple = try parse(#"[{"id": "apple", "issuer": "https://localhost:9000", "jwksUri": "https://localhost:9000/keys", "audiences": ["a"]}]"#)
        #expect(apple[0].issuers == ["https://localhost:9000"] && apple[0].jwksURI == "https://localhost:9000/keys")
        #expect(try parse("[]").isEmpty)
    }

    @Test(
        "each bad field is refused with a message naming it",
        arguments: [
            (#"{"id": "apple"}"#, "JSON array"),
            (#"[42]"#, "entry 1 is not an object"),
            (#"[{"audiences": ["a"]}]"#, "\"id\""),
            (#"[{"id": "Apple", "audiences": ["a"]}]"#, "\"id\""),
            (#"[{"id": "corp", "audiences": ["a"]}]"#, "needs \"issuer\""),
            (#"[{"id": "corp", "issuer": "http://idp.example", "audiences": ["a"]}]"#, "\"issuer\" must be an https URL"),
            (#"[{"id": "apple", "audiences": []}]"#, "needs \"audiences\""),
            (#"[{"id": "apple", "audiences": "a"}]"#, "needs \"audiences\""),
            (#"[{"id": "apple", "audiences": [""]}]"#, "\"audiences\" must hold"),
            (#"[{"id": "google", "audiences": ["a"], "jwksUri": "https://u:p@keys.example/"}]"#, "\"jwksUri\" must be an https URL"),
            (#"[{"id": "google", "audiences": ["a"], "clientId": "b"}]"#, "\"clientId\" must be one of"),
            (#"[{"id": "google", "audiences": ["a"], "clientSecretFile": "/s"}]"#, "\"clientSecretFile\" needs"),
            (#"[{"id": "google", "audiences": ["a"], "clientSecret": "hunter2"}]"#, "unknown field \"clientSecret\""),
            (#"[{"id": "google", "audiences": ["a"]}, {"id": "google", "audiences": ["b"]}]"#, "appears twice"),
            ("not json", "JSON array"),
        ])
    func refusals(json: String, expected: String) {
        let error = #expect(throws: SettingsError.self) { try parse(json) }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(error?.message.contains("hunter2") == false)
    }
}
