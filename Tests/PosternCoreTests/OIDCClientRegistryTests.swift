import Foundation
import PosternCore
import PosternCrypto
import Testing

/// Registering relying parties (`service.oidcClients`) on the in-memory store: Postern makes the id
/// and the secret, keeps only the secret's SHA-256, and a removal takes what the client was given.
@Suite("OIDC client registry")
struct OIDCClientRegistryTests {
    static let redirect = "https://grafana.example.com/login/generic_oauth"

    @Test("a confidential client gets a random id and a 32-byte secret, stored only as its SHA-256")
    func addConfidential() throws {
        let h = try FlowHarness()
        h.clock.advance(by: 1_000)
        let added = try h.service.oidcClients.add(
            name: "Grafana", redirectURIs: [Self.redirect], firstParty: true, postLogoutRedirectURIs: ["https://grafana.example.com/login"],
            allowNoPKCE: true, scopes: ["openid", "email", "offline_access", "email"])
        let secret = try #require(added.secret)
        #expect(Base64URL.decode(Substring(secret))?.count == 32 && secret.count == 43)
        #expect(Base64URL.decode(Substring(added.client.clientID))?.count == 16)
        #expect(added.client.name == "Grafana" && added.client.firstParty && added.client.allowNoPKCE && !added.client.isPublic)
        #expect(added.client.scopes == ["openid", "email", "offline_access"])
        #expect(added.client.createdAt == h.clock.unixSeconds())
        #expect(added.client.authentication == .secretHash(SHA256.hash(Array(secret.utf8))))
        let stored = try #require(try h.service.oidcClients.client(id: added.client.clientID))
        #expect(stored == added.client && stored.acceptsSecret(secret) && !stored.acceptsSecret(secret + "x"))
        // Nothing kept holds the secret: the client's description, the store's state.
        #expect(!"\(stored)".contains(secret) && !"\(h.store.snapshot())".contains(secret))
        let second = try h.service.oidcClients.add(name: "Grafana", redirectURIs: [Self.redirect])
        #expect(second.client.clientID != added.client.clientID && second.secret != secret)
    }

    @Test("a public client has no secret; the defaults are openid email profile, not first-party, PKCE required")
    func addPublic() throws {
        let h = try FlowHarness()
        let added = try h.service.oidcClients.add(name: "Notes", redirectURIs: ["com.example.notes:/cb"], public: true)
        #expect(added.secret == nil && added.client.isPublic)
        #expect(added.client.scopes == OIDCClient.defaultScopes && !added.client.firstParty && !added.client.allowNoPKCE)
        #expect(try h.service.oidcClients.list().map(\.clientID) == [added.client.clientID])
    }

    @Test("a bad registration is INVALID_ARGUMENT naming the field, and nothing is stored")
    func refused() throws {
        let h = try FlowHarness()
        let error = expectAuthError("INVALID_ARGUMENT") {
            _ = try h.service.oidcClients.add(name: "Grafana", redirectURIs: [Self.redirect, "http://grafana.example.com/cb"])
        }
        #expect(error?.message.hasPrefix("redirectUris[1]: http only on a loopback") == true)
        expectAuthError("INVALID_ARGUMENT") {
            _ = try h.service.oidcClients.add(name: "Notes", redirectURIs: ["com.example.notes:/cb"], public: true, allowNoPKCE: true)
        }
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.oidcClients.add(name: "Grafana", redirectURIs: [Self.redirect], scopes: ["admin"]) }
        #expect(try h.service.oidcClients.list().isEmpty)
    }

    @Test("clients are listed oldest first")
    func listOrder() throws {
        let h = try FlowHarness()
        var ids: [String] = []
        for name in ["one", "two", "three"] {
            ids.append(try h.service.oidcClients.add(name: name, redirectURIs: [Self.redirect]).client.clientID)
            h.clock.advance(by: 1)
        }
        #expect(try h.service.oidcClients.list().map(\.clientID) == ids)
    }

    @Test("rotating a secret replaces it at once and keeps the rest; a public client has none; an unknown client is nil")
    func rotate() throws {
        let h = try FlowHarness()
        let added = try h.service.oidcClients.add(name: "Grafana", redirectURIs: [Self.redirect], firstParty: true)
        let old = try #require(added.secret)
        h.clock.advance(by: 60)
        let rotated = try #require(try h.service.oidcClients.rotateSecret(id: added.client.clientID))
        let new = try #require(rotated.secret)
        #expect(new != old)
        let stored = try #require(try h.service.oidcClients.client(id: added.client.clientID))
        #expect(stored.acceptsSecret(new) && !stored.acceptsSecret(old))
        #expect(stored.createdAt == added.client.createdAt && stored.firstParty && stored.redirectURIs == [Self.redirect])
        #expect(try h.service.oidcClients.rotateSecret(id: "nobody") == nil)
        let open = try h.service.oidcClients.add(name: "Notes", redirectURIs: ["com.example.notes:/cb"], public: true)
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.oidcClients.rotateSecret(id: open.client.clientID) }
        #expect(try h.service.oidcClients.client(id: open.client.clientID)?.isPublic == true)
    }

    @Test("removing a client revokes the refresh tokens issued to it and drops its consents; a second removal is false")
    func remove() throws {
        let h = try FlowHarness()
        let added = try h.service.oidcClients.add(name: "Grafana", redirectURIs: [Self.redirect])
        let id = added.client.clientID
        try h.store.write { tx in
            try tx.insertAccount(Account(uid: "u1", createdAt: 1))
            try tx.upsertOIDCConsent(OIDCConsent(uid: "u1", clientID: id, scopes: ["openid"], grantedAt: 1))
            try tx.insertRefreshToken(RefreshTokenRecord(
                hash: [1], family: "f", uid: "u1", authTime: 1, method: "emailLink", createdAt: 1, expiresAt: .max, clientID: id))
        }
        #expect(try h.service.oidcClients.remove(id: id))
        #expect(try h.service.oidcClients.client(id: id) == nil && h.service.oidcClients.list().isEmpty)
        #expect(try h.store.read { try $0.oidcConsent(uid: "u1", clientID: id) } == nil)
        #expect(try h.store.read { try $0.refreshToken(hash: [1]) }?.revoked == true)
        #expect(try !h.service.oidcClients.remove(id: id))
    }
}
