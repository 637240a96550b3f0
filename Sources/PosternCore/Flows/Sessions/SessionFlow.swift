import Foundation
import PosternAPI
import PosternCrypto

/// Sessions: anonymous accounts, ID tokens (ES256) and rotating refresh tokens, their
/// verification and revocation. Every flow that signs someone in issues through here.
public final class SessionFlow: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & SessionWriter & PhoneWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & SessionReader & PhoneReader & WebhookReader & ActivityReader

    let context: FlowContext

    init(context: FlowContext) { self.context = context }

    /// Creates an anonymous account and signs it in.
    /// - Throws: `AuthError.signUpNotAllowed` unless sign-ups are open (``SignUpPolicy``); 503 when
    ///   the store is down.
    public func signInAnonymously() throws(AuthError) -> Session {
        try context.config.signUp.admitWithoutAddress(anonymous: true)
        let now = context.clock.unixSeconds()
        let issue = try issuer()
        let events = context.events
        return try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) in
            let uid = answers.newUID
            // An anonymous account is an account: the operator's before_sign_up decides on it too.
            try answers.admit(HookSubject(uid: uid, email: nil, method: "anonymous", isNewUser: true))
            let account = Account(uid: uid, createdAt: now, lastSignInAt: now)
            try tx.insertAccount(account)
            try events.record(.userCreated(uid: uid, email: nil), tx: tx, now: now)
            try events.record(.userSignedIn(uid: uid, method: "anonymous"), tx: tx, now: now)
            return try issue(account, "anonymous", now, nil, tx, answers)
        }
    }

    /// Where a session's refresh token comes from.
    enum RefreshLineage: Sendable {
        /// The successor of `token` in `family`: derived from it (see `successorToken`) and stored.
        case successor(of: String, family: String)
        /// A successor already stored in `family`, handed out again within the reuse grace.
        case again(String, family: String)
    }

    /// A closure that issues a session inside a transaction: an ID token and a stored refresh token.
    /// Arguments: account, sign-in method, auth_time, the refresh lineage (nil: a new family with a
    /// random token, and its ``DeviceSession`` from the request's ``SessionOrigin``; a refresh moves
    /// the family's session on). The ID token's `sid` names the session. Last, the hooks' answers of
    /// the write (``FlowContext/writeAskingHooks(_:)``), whose token claims the ID token carries.
    typealias Issuer = @Sendable (Account, String, Int64, RefreshLineage?, any SessionWriter, HookAnswers) throws -> Session

    /// The successor of a refresh token: an HMAC of it under the active action-code key, so that
    /// two concurrent refreshes of one token (two tabs) can both be given the same successor
    /// without its text being stored anywhere. Unpredictable without the key, like a random one.
    func successorToken(of token: String) -> String {
        Base64URL.encode(context.keys.current.actionCodes.activeMAC.authenticate(Array("postern-refresh-successor|\(token)".utf8)))
    }

    /// The issuer under the current signing key.
    func issuer() throws(AuthError) -> Issuer {
        let signer = context.keys.current.idTokenSigner
        let clock = context.clock
        let config = context.config
        return { account, method, authTime, lineage, tx, answers in
            let now = clock.unixSeconds()
            // Asked first: a missing answer stops the write before anything is stored.
            let extra = try answers.claims(uid: account.uid, email: account.email?.address, method: method)
            let expiresAt = now + config.refreshTokenLifetime
            let refresh: String
            let sessionID: String
            switch lineage {
            case .again(let successor, let family):
                refresh = successor
                sessionID = try Self.sessionID(of: family, uid: account.uid, method: method, now: now, expiresAt: expiresAt, tx)
            case .successor(let token, let family):
                refresh = token
                try tx.insertRefreshToken(
                    RefreshTokenRecord(
                        hash: SHA256.hash(refresh), family: family, uid: account.uid, authTime: authTime, method: method,
                        createdAt: now, expiresAt: expiresAt))
                sessionID = try Self.sessionID(of: family, uid: account.uid, method: method, now: now, expiresAt: expiresAt, tx)
            case nil:
                refresh = Base64URL.encode(try SecureRandom.bytes(32))
                let family = try FlowContext.newID()
                try tx.insertRefreshToken(
                    RefreshTokenRecord(
                        hash: SHA256.hash(refresh), family: family, uid: account.uid, authTime: authTime,
                        method: method, createdAt: now, expiresAt: expiresAt))
                sessionID = try Self.newDeviceSession(family: family, uid: account.uid, method: method, now: now, expiresAt: expiresAt, tx)
            }
            // The operator's claims under Postern's own (which a hook may not name anyway).
            let claims: [String: JSONValue] = extra.merging([
                "iss": .string(config.publicURL), "aud": .string(config.publicURL), "sub": .string(account.uid),
                "iat": .integer(now), "exp": .integer(now + config.idTokenLifetime), "auth_time": .integer(authTime),
                "email_verified": .bool(account.emailVerified), "is_anonymous": .bool(account.isAnonymous),
                "sign_in_method": .string(method), "sv": .integer(account.sessionVersion),
                "email": account.email.map { .string($0.address) } ?? .null, "sid": .string(sessionID),
            ]) { _, ours in ours }
            let idToken = try JSONWebToken.sign(claims: Data(JSONValue.object(claims).sortedJSONText.utf8), with: signer)
            return Session(
                uid: account.uid, idToken: idToken, refreshToken: refresh, expiresIn: config.idTokenLifetime,
                isAnonymous: account.isAnonymous, email: account.email?.address)
        }
    }

    /// The session row of a new refresh family, from the request's ``SessionOrigin`` (an OpenID
    /// Connect client's grant passes none: its token request comes from the client's server, not
    /// the user's device): its public id.
    /// - Throws: what the store throws; `CryptoError` when the DRBG fails.
    static func newDeviceSession(
        family: String, uid: String, method: String, clientID: String? = nil, origin: SessionOrigin? = SessionOrigin.current,
        now: Int64, expiresAt: Int64, _ tx: any SessionWriter
    ) throws -> String {
        let id = try FlowContext.newID()
        try tx.insertDeviceSession(
            DeviceSession(
                id: id, uid: uid, family: family, deviceName: origin?.deviceName, network: origin?.network, method: method,
                clientID: clientID, createdAt: now, lastUsedAt: now, expiresAt: expiresAt))
        return id
    }

    /// A refresh of `family`: its session's last use and expiry move on, and its public id is
    /// answered; a family issued before sessions were kept gets its row now.
    /// - Throws: what the store throws.
    static func sessionID(
        of family: String, uid: String, method: String, clientID: String? = nil, origin: SessionOrigin? = SessionOrigin.current,
        now: Int64, expiresAt: Int64, _ tx: any SessionWriter
    ) throws -> String {
        if let id = try tx.touchDeviceSession(family: family, at: now, expiresAt: expiresAt) { return id }
        return try newDeviceSession(
            family: family, uid: uid, method: method, clientID: clientID, origin: origin, now: now, expiresAt: expiresAt, tx)
    }

    /// Verifies an ID token: signature (any key in the JWKS), issuer, audience (Postern's own: a
    /// token the same key signed for another audience, such as an OpenID Connect client's ID token
    /// or access token, is not a session of this API), type (`JWT` or none: not an `at+jwt` access
    /// token), expiry, and that the account
    /// exists, is enabled, and has not revoked its sessions since the token was issued (`sv`).
    /// - Throws: `AuthError.invalidIDToken`, or `userDisabled`.
    public func verifyIDToken(_ token: String) throws(AuthError) -> (account: Account, claims: IDTokenClaims) {
        let ring = context.keys.current
        guard let parsed = try? JSONWebToken.parse(token),
            parsed.type == nil || parsed.type == JSONWebToken.TokenType.jwt.rawValue,
            let key = ring.idTokenVerifiers.first(where: { $0.keyID == parsed.keyID }), parsed.isSigned(by: key),
            let object = try? JSONSerialization.jsonObject(with: parsed.claims) as? [String: Any],
            let uid = object["sub"] as? String, let iat = (object["iat"] as? NSNumber)?.int64Value,
            let exp = (object["exp"] as? NSNumber)?.int64Value, let authTime = (object["auth_time"] as? NSNumber)?.int64Value,
            let version = (object["sv"] as? NSNumber)?.int64Value,
            object["iss"] as? String == context.config.publicURL, object["aud"] as? String == context.config.publicURL
        else { throw .invalidIDToken }
        let now = context.clock.unixSeconds()
        guard now < exp else { throw .invalidIDToken }
        guard let account = try context.read({ (tx: Reads) in try tx.account(uid: uid) }), version == account.sessionVersion else {
            throw .invalidIDToken
        }
        guard !account.disabled else { throw .userDisabled }
        let claims = IDTokenClaims(
            uid: uid, issuedAt: iat, expiresAt: exp, authTime: authTime,
            signInMethod: object["sign_in_method"] as? String ?? "", sessionID: object["sid"] as? String)
        return (account, claims)
    }

    /// The session presented with a credential (a sign-in's `idToken`), nil without one: its
    /// account, and whether it signed in recently enough to add a credential to the account.
    /// - Throws: the errors of `verifyIDToken`.
    func presented(_ token: String?) throws(AuthError) -> PresentedSession? {
        guard let token else { return nil }
        let verified = try verifyIDToken(token)
        return PresentedSession(account: verified.account, signedInRecently: isRecent(verified.claims))
    }

    /// Verifies an ID token and that its sign-in is at most 5 minutes old.
    /// - Throws: `AuthError.requiresRecentLogin` and the errors of `verifyIDToken`.
    public func verifyRecentSignIn(_ token: String) throws(AuthError) -> (account: Account, claims: IDTokenClaims) {
        let verified = try verifyIDToken(token)
        guard isRecent(verified.claims) else { throw .requiresRecentLogin }
        return verified
    }

    /// Whether the sign-in behind `claims` is at most `recentSignInWindow` (5 minutes) old: the
    /// one rule of "a recent sign-in".
    private func isRecent(_ claims: IDTokenClaims) -> Bool {
        context.clock.unixSeconds() - claims.authTime <= context.config.recentSignInWindow
    }

    /// Exchanges a refresh token for a new session and a new refresh token. Presenting a token
    /// that was already exchanged revokes its whole family (a stolen token was replayed) — except
    /// within `refreshReuseGrace` seconds of its exchange, while its successor is still unused:
    /// then it gets that same successor again (two tabs refreshing at once, as Auth0's and Okta's
    /// reuse interval), so one family has one live token either way.
    /// - Throws: `AuthError.tokenRevoked`, `invalidRefreshToken`, `userDisabled`.
    public func refresh(_ token: String) throws(AuthError) -> Session {
        let issue = try issuer()
        return try rotate(token, clientID: nil) { account, record, lineage, tx, answers in
            try issue(account, record.method, record.authTime, lineage, tx, answers)
        }
    }

    /// The one rule of refresh-token rotation, for the API's sessions (`clientID` nil) and an
    /// OpenID Connect client's (only that client's tokens): finds the token, refuses an expired,
    /// revoked or other client's one, hands a reuse within `refreshReuseGrace` the same successor
    /// (``RefreshLineage/again(_:)``), revokes the family on any other reuse, and otherwise marks
    /// it rotated and has `issue` store its successor (``RefreshLineage/successor(of:family:)``),
    /// all in one transaction. `issue` gets the enabled account, the presented token's record and
    /// the lineage, and the hooks' answers (a refresh asks token_claims again: claims may change).
    /// - Throws: `AuthError.tokenRevoked`, `invalidRefreshToken`, `userDisabled`, `hookFailed`.
    func rotate<T: Sendable>(
        _ token: String, clientID: String?,
        issue: @escaping @Sendable (Account, RefreshTokenRecord, RefreshLineage, any SessionWriter, HookAnswers) throws -> T
    ) throws(AuthError) -> T {
        let hash = SHA256.hash(token)
        let now = context.clock.unixSeconds()
        let successor = successorToken(of: token)
        let grace = context.config.refreshReuseGrace
        let events = context.events
        let outcome = try context.writeAskingHooks { (answers: HookAnswers, tx: Writes) -> Result<T, AuthError> in
            // A token of an OpenID Connect client is refreshed by that client at its token
            // endpoint; anywhere else it is unknown, and left as it is.
            guard let record = try tx.refreshToken(hash: hash), record.expiresAt > now, record.clientID == clientID else {
                return .failure(.invalidRefreshToken)
            }
            if record.revoked { return .failure(.tokenRevoked) }
            if let rotatedAt = record.rotatedAt {
                if now - rotatedAt <= grace, let next = try tx.refreshToken(hash: SHA256.hash(successor)),
                    next.family == record.family, next.rotatedAt == nil, !next.revoked, next.expiresAt > now,
                    let account = try tx.account(uid: record.uid), !account.disabled
                {
                    return .success(try issue(account, record, .again(successor, family: record.family), tx, answers))
                }
                _ = try tx.revokeRefreshFamily(record.family)
                try events.record(.sessionRefreshReuseDetected(uid: record.uid), tx: tx, now: now)
                return .failure(.tokenRevoked)
            }
            guard let account = try tx.account(uid: record.uid) else { return .failure(.invalidRefreshToken) }
            guard !account.disabled else { return .failure(.userDisabled) }
            try tx.markRefreshTokenRotated(hash: hash, at: now)
            return .success(try issue(account, record, .successor(of: successor, family: record.family), tx, answers))
        }
        return try outcome.get()
    }

    /// Signs out: revokes the refresh token's family. Unknown tokens are ignored (204 either way), and
    /// so are an OpenID Connect client's (its revocation endpoint ends those).
    /// - Throws: `AuthError.unavailable` when the store is down.
    public func signOut(refreshToken: String) throws(AuthError) {
        let hash = SHA256.hash(refreshToken)
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { (tx: Writes) in
            if let record = try tx.refreshToken(hash: hash), !record.revoked, record.clientID == nil {
                _ = try tx.revokeRefreshFamily(record.family)
                try events.record(.sessionRevoked(uid: record.uid, reason: "signOut"), tx: tx, now: now)
            }
        }
    }

    /// Ends the sessions of account `uid` that signed in with `method` (a phone code, when the
    /// number moved away): their refresh tokens, and — when there were any — the account's ID
    /// tokens issued so far (they do not say which sign-in they came from; the other sessions
    /// refresh and go on).
    static func revokeSessions(of uid: String, method: String, tx: any SessionWriter & AccountWriter) throws {
        guard try tx.revokeRefreshTokens(uid: uid, method: method) > 0, var account = try tx.account(uid: uid) else { return }
        account.sessionVersion = FlowMath.nextVersion(after: account.sessionVersion)
        try tx.updateAccount(account)
    }

    /// Revokes every session of an account: its refresh tokens, and the ID tokens issued so far.
    static func revokeAll(of account: inout Account, tx: any SessionWriter) throws {
        _ = try tx.revokeRefreshTokens(uid: account.uid)
        account.sessionVersion = FlowMath.nextVersion(after: account.sessionVersion)
    }

    /// The address of `account` is being proved (a sign-in link or its 6-digit code, a
    /// verification link, a reset before it sets the new password): a password it held before
    /// anyone proved the address is dropped and every session ends, as a reset ends them, before
    /// the prover's session is issued. Whoever chose that password (an unverified import) and
    /// signed in with it is out — and so are the phone numbers the account holds or claims: an
    /// import brings none, so each was added through a session of that password, and a number
    /// verified by its holder would be the attacker's way back in by phone sign-in (a trojan
    /// identifier). True when there was one (a sign-in's answer then says `needsPassword`). The
    /// caller stores the account.
    static func endUnprovedPassword(
        of account: inout Account, tx: any SessionWriter & PhoneWriter & WebhookWriter, events: EventLedger, now: Int64
    ) throws -> Bool {
        guard account.dropUnprovedPassword() else { return false }
        try revokeAll(of: &account, tx: tx)
        try events.record(.sessionRevoked(uid: account.uid, reason: "addressProved"), tx: tx, now: now)
        for claim in try tx.phoneClaims(uid: account.uid) where try tx.deletePhoneClaim(id: claim.id) {
            try events.record(.phoneRemoved(uid: account.uid, claimID: claim.id), tx: tx, now: now)
            account.providers.remove(.phone)
        }
        return true
    }
}

/// A session presented with a credential: who it is, and whether its sign-in is recent (within
/// `recentSignInWindow`), which adding an address or a number to a normal account asks for.
struct PresentedSession: Sendable {
    let account: Account
    let signedInRecently: Bool
}
