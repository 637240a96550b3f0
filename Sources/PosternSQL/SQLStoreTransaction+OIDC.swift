import Foundation
import PosternAPI
import PosternCore
import PosternCrypto

extension SQLStoreTransaction {
    // MARK: OpenID Connect authorization codes

    private static let codeColumns =
        "code_hash, client_id, uid, redirect_uri, scopes, nonce, code_challenge, auth_time, methods, refresh_family, created_at, expires_at, consumed_at"

    private func readCode(_ row: any SQLRow) throws -> AuthorizationCodeRecord {
        guard let hash = row.blob(0), let client = row.text(1), let uid = row.text(2), let redirect = row.text(3),
            let scopes = row.text(4), let methods = row.text(8), let family = row.text(9)
        else { throw StoreError.corrupt("authorization code row") }
        return AuthorizationCodeRecord(
            codeHash: hash, clientID: client, uid: uid, redirectURI: redirect, scopes: Self.tokens(scopes), nonce: row.text(5),
            codeChallenge: row.text(6), authTime: row.integer(7), methods: Self.tokens(methods), refreshFamily: family,
            createdAt: row.integer(10), expiresAt: row.integer(11), consumedAt: row.optionalInteger(12))
    }

    /// A space-separated list as stored (scope and method tokens hold no spaces), empty for "".
    private static func tokens(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    public func authorizationCode(hash: [UInt8]) throws -> AuthorizationCodeRecord? {
        try db.first("SELECT \(Self.codeColumns) FROM oidc_codes WHERE code_hash = ?", [.blob(hash)], readCode)
    }

    public func insertAuthorizationCode(_ c: AuthorizationCodeRecord) throws {
        try db.execute(
            "INSERT INTO oidc_codes (\(Self.codeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .blob(c.codeHash), .text(c.clientID), .text(c.uid), .text(c.redirectURI), .text(c.scopes.joined(separator: " ")),
                c.nonce.map(SQLValue.text) ?? .null, c.codeChallenge.map(SQLValue.text) ?? .null, .integer(c.authTime),
                .text(c.methods.joined(separator: " ")), .text(c.refreshFamily), .integer(c.createdAt), .integer(c.expiresAt),
                c.consumedAt.map(SQLValue.integer) ?? .null,
            ])
    }

    public func consumeAuthorizationCode(hash: [UInt8], at now: Int64) throws -> AuthorizationCodeConsumption? {
        // One statement decides: SQLite writes one at a time; PostgreSQL re-checks
        // `consumed_at IS NULL` on the row a concurrent redemption left (or fails the serializable
        // transaction, whose retry then finds it consumed).
        let won = try db.execute(
            "UPDATE oidc_codes SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL", [.integer(now), .blob(hash)])
        guard let record = try authorizationCode(hash: hash) else { return nil }
        return won == 1 ? .consumed(record) : .replayed(record)
    }

    public func pruneAuthorizationCodes(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "oidc_codes", key: "code_hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}

extension SQLStoreTransaction {
    // MARK: OpenID Connect clients

    private static let clientColumns =
        "client_id, name, secret_hash, redirect_uris, post_logout_redirect_uris, scopes, first_party, allow_no_pkce, created_at, id_token_signed_response_alg"

    private func readClient(_ row: any SQLRow) throws -> OIDCClient {
        guard let id = row.text(0), let name = row.text(1), let redirects = row.text(3).flatMap(Self.jsonList),
            let postLogout = row.text(4).flatMap(Self.jsonList), let scopes = row.text(5),
            let algorithm = row.text(9).flatMap(JSONWebToken.Algorithm.init(rawValue:))
        else { throw StoreError.corrupt("oidc client row") }
        return OIDCClient(
            clientID: id, name: name, authentication: row.blob(2).map(OIDCClient.Authentication.secretHash) ?? .publicClient,
            redirectURIs: redirects, postLogoutRedirectURIs: postLogout, scopes: Self.tokens(scopes), firstParty: row.integer(6) != 0,
            allowNoPKCE: row.integer(7) != 0, idTokenSignedResponseAlg: algorithm, createdAt: row.integer(8))
    }

    /// The columns of `clientColumns` after the client id, then the id (an UPDATE's order).
    private static func clientValues(_ c: OIDCClient) -> [SQLValue] {
        let secret: SQLValue
        switch c.authentication {
        case .secretHash(let hash): secret = .blob(hash)
        case .publicClient: secret = .null
        }
        return [
            .text(c.name), secret, .text(jsonText(c.redirectURIs)), .text(jsonText(c.postLogoutRedirectURIs)),
            .text(c.scopes.joined(separator: " ")), .integer(c.firstParty ? 1 : 0), .integer(c.allowNoPKCE ? 1 : 0),
            .integer(c.createdAt), .text(c.idTokenSignedResponseAlg.rawValue), .text(c.clientID),
        ]
    }

    /// A list of strings as JSON text: redirect URIs are checked at registration, not here, so the
    /// column holds any string without a separator to escape.
    private static func jsonText(_ list: [String]) -> String { JSONValue.array(strings: list).sortedJSONText }

    private static func jsonList(_ text: String) -> [String]? { try? JSONDecoder().decode([String].self, from: Data(text.utf8)) }

    /// A foreign key, checked first so that a missing row is `notFound` on both dialects
    /// (a violated constraint would fail PostgreSQL's whole transaction).
    private func requireRow(_ table: String, _ key: String, _ value: String, _ what: String) throws {
        guard try db.first("SELECT 1 FROM \(table) WHERE \(key) = ?", [.text(value)], { _ in true }) != nil else {
            throw StoreError.notFound(what)
        }
    }

    public func oidcClient(id clientID: String) throws -> OIDCClient? {
        try db.first("SELECT \(Self.clientColumns) FROM oidc_clients WHERE client_id = ?", [.text(clientID)], readClient)
    }

    public func oidcClients() throws -> [OIDCClient] {
        var clients: [OIDCClient] = []
        try db.query("SELECT \(Self.clientColumns) FROM oidc_clients") { clients.append(try readClient($0)) }
        // Sorted here, not by ORDER BY: a PostgreSQL collation may order ids otherwise than bytes do.
        return clients.sorted { $0.createdAt != $1.createdAt ? $0.createdAt < $1.createdAt : Self.bytewise($0.clientID, $1.clientID) }
    }

    public func insertOIDCClient(_ client: OIDCClient) throws {
        let inserted = try db.execute(
            "INSERT INTO oidc_clients (name, secret_hash, redirect_uris, post_logout_redirect_uris, scopes, first_party, allow_no_pkce, created_at, id_token_signed_response_alg, client_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            Self.clientValues(client))
        guard inserted == 1 else { throw StoreError.duplicate("oidc_clients_pkey") }
    }

    public func updateOIDCClient(_ client: OIDCClient) throws {
        let changed = try db.execute(
            "UPDATE oidc_clients SET name = ?, secret_hash = ?, redirect_uris = ?, post_logout_redirect_uris = ?, scopes = ?, first_party = ?, allow_no_pkce = ?, created_at = ?, id_token_signed_response_alg = ? WHERE client_id = ?",
            Self.clientValues(client))
        guard changed == 1 else { throw StoreError.notFound("oidc client") }
    }

    public func deleteOIDCClient(id clientID: String) throws -> Bool {
        // Its consents go by their foreign key; codes and refresh tokens name the client without one
        // (a refresh token is revoked, not deleted, so a replay of it is still told from garbage).
        guard try db.execute("DELETE FROM oidc_clients WHERE client_id = ?", [.text(clientID)]) == 1 else { return false }
        try db.execute("DELETE FROM oidc_codes WHERE client_id = ?", [.text(clientID)])
        try db.execute("UPDATE refresh_tokens SET revoked = 1 WHERE client_id = ? AND revoked = 0", [.text(clientID)])
        return true
    }

    // MARK: pending authorization requests

    private static let requestColumns = "id, browser_hash, client_id, parameters, created_at, expires_at"

    private func readRequest(_ row: any SQLRow) throws -> OIDCPendingRequest {
        guard let id = row.text(0), let browser = row.blob(1), let client = row.text(2),
            let parameters = row.text(3).flatMap({ try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) })
        else { throw StoreError.corrupt("oidc request row") }
        return OIDCPendingRequest(
            id: id, browserHash: browser, clientID: client, parameters: parameters, createdAt: row.integer(4), expiresAt: row.integer(5))
    }

    public func oidcPendingRequest(id: String) throws -> OIDCPendingRequest? {
        try db.first("SELECT \(Self.requestColumns) FROM oidc_requests WHERE id = ?", [.text(id)], readRequest)
    }

    public func insertOIDCPendingRequest(_ r: OIDCPendingRequest) throws {
        let inserted = try db.execute(
            "INSERT INTO oidc_requests (\(Self.requestColumns)) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                .text(r.id), .blob(r.browserHash), .text(r.clientID), .text(JSONValue.object(strings: r.parameters).sortedJSONText),
                .integer(r.createdAt), .integer(r.expiresAt),
            ])
        guard inserted == 1 else { throw StoreError.duplicate("oidc_requests_pkey") }
    }

    public func deleteOIDCPendingRequest(id: String) throws -> Bool {
        try db.execute("DELETE FROM oidc_requests WHERE id = ?", [.text(id)]) == 1
    }

    public func pruneOIDCPendingRequests(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "oidc_requests", key: "id", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }

    // MARK: browser sessions

    private static let browserSessionColumns = "hash, uid, auth_time, methods, session_version, created_at, expires_at"

    private func readBrowserSession(_ row: any SQLRow) throws -> OIDCBrowserSession {
        guard let hash = row.blob(0), let uid = row.text(1), let methods = row.text(3) else {
            throw StoreError.corrupt("oidc browser session row")
        }
        return OIDCBrowserSession(
            hash: hash, uid: uid, authTime: row.integer(2), methods: Self.tokens(methods), sessionVersion: row.integer(4),
            createdAt: row.integer(5), expiresAt: row.integer(6))
    }

    public func oidcBrowserSession(hash: [UInt8]) throws -> OIDCBrowserSession? {
        try db.first("SELECT \(Self.browserSessionColumns) FROM oidc_browser_sessions WHERE hash = ?", [.blob(hash)], readBrowserSession)
    }

    public func insertOIDCBrowserSession(_ s: OIDCBrowserSession) throws {
        try requireRow("accounts", "uid", s.uid, "account")
        let inserted = try db.execute(
            "INSERT INTO oidc_browser_sessions (\(Self.browserSessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                .blob(s.hash), .text(s.uid), .integer(s.authTime), .text(s.methods.joined(separator: " ")), .integer(s.sessionVersion),
                .integer(s.createdAt), .integer(s.expiresAt),
            ])
        guard inserted == 1 else { throw StoreError.duplicate("oidc_browser_sessions_pkey") }
    }

    public func deleteOIDCBrowserSession(hash: [UInt8]) throws -> Bool {
        try db.execute("DELETE FROM oidc_browser_sessions WHERE hash = ?", [.blob(hash)]) == 1
    }

    public func deleteOIDCBrowserSessions(uid: String) throws -> Int {
        try db.execute("DELETE FROM oidc_browser_sessions WHERE uid = ?", [.text(uid)])
    }

    public func pruneOIDCBrowserSessions(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "oidc_browser_sessions", key: "hash", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }

    // MARK: consents

    private func readConsent(_ row: any SQLRow) throws -> OIDCConsent {
        guard let uid = row.text(0), let client = row.text(1), let scopes = row.text(2) else { throw StoreError.corrupt("oidc consent row") }
        return OIDCConsent(uid: uid, clientID: client, scopes: Self.tokens(scopes), grantedAt: row.integer(3))
    }

    public func oidcConsent(uid: String, clientID: String) throws -> OIDCConsent? {
        try db.first(
            "SELECT uid, client_id, scopes, granted_at FROM oidc_consents WHERE uid = ? AND client_id = ?", [.text(uid), .text(clientID)],
            readConsent)
    }

    public func oidcConsents(uid: String) throws -> [OIDCConsent] {
        var consents: [OIDCConsent] = []
        try db.query("SELECT uid, client_id, scopes, granted_at FROM oidc_consents WHERE uid = ?", [.text(uid)]) {
            consents.append(try readConsent($0))
        }
        return consents.sorted { Self.bytewise($0.clientID, $1.clientID) }
    }

    public func upsertOIDCConsent(_ c: OIDCConsent) throws {
        try requireRow("accounts", "uid", c.uid, "account")
        try requireRow("oidc_clients", "client_id", c.clientID, "oidc client")
        try db.execute(
            """
            INSERT INTO oidc_consents (uid, client_id, scopes, granted_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (uid, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = excluded.granted_at
            """,
            [.text(c.uid), .text(c.clientID), .text(c.scopes.joined(separator: " ")), .integer(c.grantedAt)])
    }

    public func deleteOIDCConsent(uid: String, clientID: String) throws -> Bool {
        try db.execute("DELETE FROM oidc_consents WHERE uid = ? AND client_id = ?", [.text(uid), .text(clientID)]) == 1
    }

    /// Byte order, as Swift's `<` on these ASCII ids and SQLite's BINARY collation order them.
    private static func bytewise(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
