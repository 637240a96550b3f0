/// The OpenID Connect provider's reads, part of every `StoreReader`: its clients, authorization
/// codes by the SHA-256 of the code (the code itself is never stored), the authorization requests
/// waiting for a sign-in, browser sessions by the SHA-256 of their cookie, and consents.
public protocol OIDCReader {
    /// The authorization code whose SHA-256 is `hash`, consumed or not, until it is pruned.
    func authorizationCode(hash: [UInt8]) throws -> AuthorizationCodeRecord?
    /// The registered client `clientID`.
    func oidcClient(id clientID: String) throws -> OIDCClient?
    /// Every registered client, oldest first (then by id).
    func oidcClients() throws -> [OIDCClient]
    /// The authorization request `id` waiting for its sign-in, until it is deleted or pruned
    /// (expiry is the caller's to check).
    func oidcPendingRequest(id: String) throws -> OIDCPendingRequest?
    /// The browser session whose cookie's SHA-256 is `hash` (expiry is the caller's to check).
    func oidcBrowserSession(hash: [UInt8]) throws -> OIDCBrowserSession?
    /// What `uid` granted `clientID`, if anything.
    func oidcConsent(uid: String, clientID: String) throws -> OIDCConsent?
    /// Every consent of `uid`, by client id.
    func oidcConsents(uid: String) throws -> [OIDCConsent]
}

/// The OpenID Connect provider's changes, part of every `StoreWriter`.
public protocol OIDCWriter: OIDCReader {
    /// Records a new authorization code. Throws `StoreError.duplicate` for a taken hash and
    /// `StoreError.notFound` for an account that does not exist.
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws
    /// Consumes the code whose SHA-256 is `hash` at `now`, atomically: of concurrent callers (on
    /// one daemon or several) exactly one gets `.consumed`, every later one `.replayed`; nil for a
    /// hash that is unknown (never issued, or pruned). Expiry is the caller's to check: an expired
    /// code is consumed like another.
    func consumeAuthorizationCode(hash: [UInt8], at now: Int64) throws -> AuthorizationCodeConsumption?
    /// Forgets at most `limit` codes (consumed or not) that expired at or before `horizon`;
    /// returns how many.
    func pruneAuthorizationCodes(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Registers a client. Throws `StoreError.duplicate` for a taken client id.
    func insertOIDCClient(_ client: OIDCClient) throws
    /// Replaces a client's registration (a new secret). Throws `StoreError.notFound` for an
    /// unknown client id.
    func updateOIDCClient(_ client: OIDCClient) throws
    /// Removes a client with everything it was given: its consents, its authorization codes, and
    /// its browser-independent grants (the refresh tokens issued to it are revoked). Returns
    /// false for an unknown client id.
    func deleteOIDCClient(id clientID: String) throws -> Bool

    /// Records an authorization request waiting for its sign-in. Throws `StoreError.duplicate`
    /// for a taken id.
    func insertOIDCPendingRequest(_ request: OIDCPendingRequest) throws
    /// Forgets a request (its sign-in finished); false when it was not there.
    func deleteOIDCPendingRequest(id: String) throws -> Bool
    /// Forgets at most `limit` requests that expired at or before `horizon`; returns how many.
    func pruneOIDCPendingRequests(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Records a browser session. Throws `StoreError.duplicate` for a taken hash and
    /// `StoreError.notFound` for an account that does not exist.
    func insertOIDCBrowserSession(_ session: OIDCBrowserSession) throws
    /// Ends one browser session (logout); false when it was not there.
    func deleteOIDCBrowserSession(hash: [UInt8]) throws -> Bool
    /// Ends every browser session of `uid`; returns how many.
    func deleteOIDCBrowserSessions(uid: String) throws -> Int
    /// Forgets at most `limit` browser sessions that expired at or before `horizon`; returns how many.
    func pruneOIDCBrowserSessions(expiredBy horizon: Int64, limit: Int) throws -> Int

    /// Records (or replaces) what `consent.uid` granted `consent.clientID`. Throws
    /// `StoreError.notFound` for an account or client that does not exist.
    func upsertOIDCConsent(_ consent: OIDCConsent) throws
    /// Withdraws a consent; false when there was none.
    func deleteOIDCConsent(uid: String, clientID: String) throws -> Bool
}
