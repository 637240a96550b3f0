import Foundation
import PosternAPI
import PosternCore
import Testing

/// The OpenID Provider metadata: a pure function of the issuer, announcing only what the provider
/// does (code flow, S256, ES256 and RS256, `iss` in the response).
@Suite("OIDC discovery")
struct OIDCDiscoveryTests {
    @Test("the document names the issuer exactly, its endpoints under it, and the code flow with S256 only")
    func document() throws {
        let document = OIDCDiscovery.document(issuer: "https://auth.example.com")
        guard case .object(let fields) = document else {
            Issue.record("not an object")
            return
        }
        #expect(fields["issuer"] == .string("https://auth.example.com"))
        #expect(fields["authorization_endpoint"] == .string("https://auth.example.com/oidc/authorize"))
        #expect(fields["token_endpoint"] == .string("https://auth.example.com/oidc/token"))
        #expect(fields["userinfo_endpoint"] == .string("https://auth.example.com/oidc/userinfo"))
        #expect(fields["revocation_endpoint"] == .string("https://auth.example.com/oidc/revoke"))
        #expect(fields["end_session_endpoint"] == .string("https://auth.example.com/oidc/logout"))
        #expect(fields["jwks_uri"] == .string("https://auth.example.com/.well-known/jwks.json"))
        #expect(fields["response_types_supported"] == .array([.string("code")]))
        #expect(fields["code_challenge_methods_supported"] == .array([.string("S256")]))
        #expect(fields["id_token_signing_alg_values_supported"] == .array([.string("ES256"), .string("RS256")]), "RS256 is mandatory (Core §15.1)")
        #expect(fields["authorization_response_iss_parameter_supported"] == .bool(true))
        #expect(fields["scopes_supported"] == .array(["openid", "email", "profile", "offline_access"].map(JSONValue.string)))
        // Discovery §3's REQUIRED members are all there.
        for required in ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported",
            "subject_types_supported", "id_token_signing_alg_values_supported"] {
            #expect(fields[required] != nil, "\(required)")
        }
        // Nothing implicit or hybrid, no `plain`, no other signing algorithm (no `none`).
        let text = document.sortedJSONText
        for absent in ["\"token\"", "id_token token", "\"plain\"", "HS256", "implicit"] {
            #expect(!text.contains(absent), "\(absent)")
        }
        #expect(OIDCDiscovery.document(issuer: "https://auth.example.com") == document)
        #expect(OIDCDiscovery.document(issuer: "http://127.0.0.1:8080") != document)
    }
}
